// Remembers a value worked out for a list and finds it again for a longer list that
// starts with the same items (the same objects, in the same order). For lists that only
// grow at the end, like a conversation's messages, the work done for the list so far is
// then not redone on every call: the caller extends the remembered value with the new
// items.
//
// A value is looked up by the identity of a list's last item (a WeakMap, so it lives no
// longer than that item), trying the list's items from its end, then every earlier item
// is compared by identity (a pointer comparison each). A list that grew a little is
// found after a few lookups; one that has nothing remembered costs a lookup per item.
// A value that was extended is forgotten, so a list that keeps growing keeps one value,
// however far apart the calls that see it.
export class ListPrefixMemo<T extends object, V> {
  private readonly byLast = new WeakMap<T, { items: readonly T[]; value: V }>();

  // The value remembered for the longest prefix of `items`, with that prefix's length.
  find(items: readonly T[]): { length: number; value: V } | undefined {
    for (let end = items.length; end > 0; end--) {
      const entry = this.byLast.get(items[end - 1]!);
      if (entry === undefined || entry.items.length !== end) continue;
      if (startsWith(items, entry.items)) return { length: end, value: entry.value };
    }
    return undefined;
  }

  // Remembers `value` for these items. `extending`: the length of the prefix whose value
  // this one was made from (what find answered), which is forgotten.
  remember(items: readonly T[], value: V, extending?: number): void {
    if (items.length === 0) return;
    if (extending !== undefined && extending > 0 && extending < items.length) {
      const previous = items[extending - 1]!;
      if (this.byLast.get(previous)?.items.length === extending) this.byLast.delete(previous);
    }
    this.byLast.set(items[items.length - 1]!, { items: items.slice(), value });
  }
}

function startsWith<T>(items: readonly T[], prefix: readonly T[]): boolean {
  for (let i = prefix.length - 1; i >= 0; i--) if (items[i] !== prefix[i]) return false;
  return true;
}
