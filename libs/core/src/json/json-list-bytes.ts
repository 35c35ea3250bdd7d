import { ListPrefixMemo } from './list-prefix-memo.js';

const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

// The UTF-8 bytes of a JSON list, `[item,item,...]`, from each item's own bytes, for
// lists that grow at the end and whose items are never changed in place (a
// conversation's messages, see docs/agent.md).
//
// Joining thousands of small cached buffers costs far more than copying one large one
// (each part is its own copy call): on a 3,600-message thread, joining the messages for
// every model request and every runs/wait answer was the largest single cost of a turn.
// So the bytes of the list as last written are kept, and a list that grew is written as
// those bytes (without their `]`) followed by the new items.
export class JsonListBytes<T extends object> {
  private readonly written = new ListPrefixMemo<T, Buffer>();

  // itemBytes: an item's JSON bytes, or undefined when this list cannot be written from
  // its items' bytes (the caller then writes it another way).
  constructor(private readonly itemBytes: (item: T) => Buffer | undefined) {}

  // Undefined when an item is not an object or itemBytes has no bytes for it. Only the
  // items after the part already written are looked at: the earlier ones are that part's
  // own objects.
  of(items: readonly unknown[]): Buffer | undefined {
    if (items.length === 0) return Buffer.from('[]');
    // A non-object item is never an entry's last (only lists of objects are remembered),
    // so looking it up finds nothing.
    const list = items as readonly T[];
    const found = this.written.find(list);
    if (found?.length === items.length) return found.value;
    const chunks: Buffer[] = [found ? found.value.subarray(0, found.value.length - 1) : OPEN];
    for (let i = found?.length ?? 0; i < items.length; i++) {
      const item = items[i];
      const bytes = item !== null && typeof item === 'object' ? this.itemBytes(item as T) : undefined;
      if (bytes === undefined) return undefined;
      if (i > 0) chunks.push(COMMA);
      chunks.push(bytes);
    }
    chunks.push(CLOSE);
    const bytes = Buffer.concat(chunks);
    this.written.remember(list, bytes, found?.length);
    return bytes;
  }
}
