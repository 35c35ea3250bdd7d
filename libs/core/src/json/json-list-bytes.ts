import { ListPrefixMemo } from './list-prefix-memo.js';

const EMPTY = Buffer.from('[]');
const CLOSE = Buffer.from(']');
const OPEN_BYTE = 0x5b; // [
const COMMA_BYTE = 0x2c; // ,
// Room left after the bytes when a list's storage is (re)made: half as much again, at
// least this much, so that a list growing by a few items per call is copied whole only
// now and then.
const MIN_ROOM = 4096;

// Bytes written for lists, with room after them for the next items.
interface Storage {
  buf: Buffer;
  // How much of buf is written: never changed below this point.
  used: number;
}

// The bytes of a list as written, without its `]`: storage.buf[0, end).
interface Written {
  storage: Storage;
  end: number;
}

// The UTF-8 bytes of a JSON list, `[item,item,...]`, from each item's own bytes, for
// lists that grow at the end and whose items are never changed in place (a
// conversation's messages, see docs/agent.md).
//
// Joining thousands of small cached buffers costs far more than copying one large one
// (each part is its own copy call): on a 3,600-message thread, joining the messages for
// every model request and every runs/wait answer was the largest single cost of a turn.
// Copying the whole list again for every item it gained was the next: so the bytes of a
// list are kept in storage with room after them, a list that grew is written as the new
// items after the bytes already there (the list is copied only when its storage is full,
// or when another list already wrote after the same start), and the answer is the
// written bytes and a `]`, two chunks for the caller to send as they are. Bytes once
// handed out are never written again: a list only ever writes past what is used.
export class JsonListBytes<T extends object> {
  private readonly written = new ListPrefixMemo<T, Written>();

  // itemBytes: an item's JSON bytes, or undefined when this list cannot be written from
  // its items' bytes (the caller then writes it another way).
  constructor(private readonly itemBytes: (item: T) => Buffer | undefined) {}

  // The list's bytes as chunks to be sent one after the other (never copied into one).
  // Undefined when an item is not an object or itemBytes has no bytes for it. Only the
  // items after the part already written are looked at: the earlier ones are that part's
  // own objects.
  chunks(items: readonly unknown[]): readonly Buffer[] | undefined {
    if (items.length === 0) return [EMPTY];
    // A non-object item is never an entry's last (only lists of objects are remembered),
    // so looking it up finds nothing.
    const list = items as readonly T[];
    const found = this.written.find(list);
    if (found?.length === items.length) return [found.value.storage.buf.subarray(0, found.value.end), CLOSE];
    const from = found?.length ?? 0;
    const parts: Buffer[] = [];
    let size = 0;
    for (let i = from; i < items.length; i++) {
      const item = items[i];
      const bytes = item !== null && typeof item === 'object' ? this.itemBytes(item as T) : undefined;
      if (bytes === undefined) return undefined;
      parts.push(bytes);
      size += bytes.length + (i > 0 ? 1 : 0);
    }
    const { storage, at } = this.room(found?.value, size);
    let end = at;
    for (let i = 0; i < parts.length; i++) {
      if (from + i > 0) storage.buf[end++] = COMMA_BYTE;
      end += parts[i]!.copy(storage.buf, end);
    }
    storage.used = end;
    this.written.remember(list, { storage, end }, found?.length);
    return [storage.buf.subarray(0, end), CLOSE];
  }

  // Where `size` more bytes go after `prefix` (nothing written yet: after a `[`): in the
  // prefix's own storage when they fit and nothing was written after it there, else in
  // new storage that starts with a copy of the prefix. (The memo forgets a prefix once a
  // list extended it, so a remembered prefix is its storage's end; the check keeps bytes
  // already handed out from being written over should that ever change.)
  private room(prefix: Written | undefined, size: number): { storage: Storage; at: number } {
    if (prefix && prefix.storage.used === prefix.end && prefix.storage.buf.length - prefix.end >= size) {
      return { storage: prefix.storage, at: prefix.end };
    }
    const start = prefix ? prefix.end : 1;
    const need = start + size;
    const storage: Storage = { buf: Buffer.allocUnsafe(need + Math.max(need >> 1, MIN_ROOM)), used: 0 };
    if (prefix) prefix.storage.buf.copy(storage.buf, 0, 0, prefix.end);
    else storage.buf[0] = OPEN_BYTE;
    return { storage, at: start };
  }
}
