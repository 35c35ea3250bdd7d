// Listings paged by a cursor (connection logs, batches): each page answers `next`, passed as
// `before` for the following one, null on the last.
export interface CursorPage<T> {
  items: T[];
  next: string | null;
}

// Every item from the first page on, newest first, one page in memory at a time; the next
// page is asked only when the loop reaches it (breaking out asks no more).
export async function* everyItem<T>(fetchPage: (before: string | undefined) => Promise<CursorPage<T>>): AsyncGenerator<T> {
  let before: string | undefined;
  for (;;) {
    const page = await fetchPage(before);
    yield* page.items;
    // An empty page ends it too, whatever it says: a cursor that does not move would loop.
    if (page.next === null || page.items.length === 0 || page.next === before) return;
    before = page.next;
  }
}
