import { JsonListBytes } from './json-list-bytes.js';
import { ListPrefixMemo } from './list-prefix-memo.js';

type Item = { n: number };
const item = (n: number): Item => ({ n });

describe(JsonListBytes.name, () => {
  // Counts the items whose bytes were asked for: what was written again.
  function lists() {
    const asked: number[] = [];
    const lists = new JsonListBytes<Item>((it) => {
      asked.push(it.n);
      return it.n < 0 ? undefined : Buffer.from(JSON.stringify(it));
    });
    // The chunks joined (undefined when the list cannot be written), as a caller sends them.
    const bytes = {
      chunks: (items: readonly unknown[]) => lists.chunks(items),
      of: (items: readonly unknown[]) => {
        const chunks = lists.chunks(items);
        return chunks && Buffer.concat(chunks);
      },
    };
    return { bytes, asked };
  }

  it('writes what JSON.stringify writes, for every length', () => {
    const { bytes } = lists();
    const items = [item(1), item(2), item(3)];
    expect(bytes.of([])!.toString()).toBe('[]');
    for (let n = 1; n <= items.length; n++) expect(bytes.of(items.slice(0, n))!.toString()).toBe(JSON.stringify(items.slice(0, n)));
  });

  it('writes only the items a grown list gained', () => {
    const { bytes, asked } = lists();
    const items = Array.from({ length: 10 }, (_, i) => item(i));
    bytes.of(items.slice(0, 6));
    asked.length = 0;
    expect(bytes.of(items)!.toString()).toBe(JSON.stringify(items));
    expect(asked).toEqual([6, 7, 8, 9]);
    asked.length = 0;
    // The same list again: nothing is written.
    expect(bytes.of([...items])!.toString()).toBe(JSON.stringify(items));
    expect(asked).toEqual([]);
  });

  it('writes a list whose start changed in full', () => {
    const { bytes, asked } = lists();
    const items = [item(1), item(2), item(3)];
    bytes.of(items);
    asked.length = 0;
    // Same last item, another object before it.
    const changed = [item(1), items[1]!, items[2]!, item(4)];
    expect(bytes.of(changed)!.toString()).toBe(JSON.stringify(changed));
    expect(asked).toEqual([1, 2, 3, 4]);
  });

  it('answers chunks that join into the list, writing a grown list after the bytes already written', () => {
    const { bytes } = lists();
    const items = Array.from({ length: 50 }, (_, i) => item(i));
    const first = bytes.chunks(items.slice(0, 10))!;
    expect(Buffer.concat(first).toString()).toBe(JSON.stringify(items.slice(0, 10)));
    const grown = bytes.chunks(items.slice(0, 12))!;
    expect(Buffer.concat(grown).toString()).toBe(JSON.stringify(items.slice(0, 12)));
    // The same storage: the first ten items were not copied again.
    expect(grown[0]!.buffer).toBe(first[0]!.buffer);
    expect(grown[0]!.byteOffset).toBe(first[0]!.byteOffset);
    // What was handed out before is unchanged.
    expect(Buffer.concat(first).toString()).toBe(JSON.stringify(items.slice(0, 10)));
    // Past the storage's room: copied into new storage, still the same bytes.
    const all = bytes.chunks(items)!;
    expect(Buffer.concat(all).toString()).toBe(JSON.stringify(items));
    expect(bytes.chunks([])!.map(String)).toEqual(['[]']);
  });

  it('keeps the bytes of two lists that grew from the same start apart', () => {
    const { bytes } = lists();
    const start = [item(1), item(2)];
    const before = bytes.chunks(start)!;
    const a = [...start, item(3)];
    const b = [...start, item(40), item(41)];
    const aBytes = bytes.chunks(a)!;
    // b grows from the same start, after a wrote its item there.
    const bBytes = bytes.chunks(b)!;
    expect(Buffer.concat(before).toString()).toBe(JSON.stringify(start));
    expect(Buffer.concat(aBytes).toString()).toBe(JSON.stringify(a));
    expect(Buffer.concat(bBytes).toString()).toBe(JSON.stringify(b));
    // Each goes on growing from its own bytes.
    const a2 = [...a, item(4)];
    expect(bytes.of(a2)!.toString()).toBe(JSON.stringify(a2));
    expect(Buffer.concat(bBytes).toString()).toBe(JSON.stringify(b));
    expect(bytes.of([...b, item(42)])!.toString()).toBe(JSON.stringify([...b, item(42)]));
  });

  it('answers undefined for a list with an item it cannot write, and remembers nothing for it', () => {
    const { bytes, asked } = lists();
    const items = [item(1), item(-1), item(2)];
    expect(bytes.of(items)).toBeUndefined();
    asked.length = 0;
    expect(bytes.of(items)).toBeUndefined();
    expect(asked).toEqual([1, -1]);
  });
});

describe(ListPrefixMemo.name, () => {
  it('finds the longest remembered prefix however far back, and forgets what was extended', () => {
    const memo = new ListPrefixMemo<Item, string>();
    const items = Array.from({ length: 200 }, (_, i) => item(i));
    memo.remember(items.slice(0, 2), 'two');
    memo.remember(items.slice(0, 4), 'four');
    expect(memo.find(items.slice(0, 6))).toEqual({ length: 4, value: 'four' });
    // 196 items gained since: still found, then superseded.
    expect(memo.find(items)).toEqual({ length: 4, value: 'four' });
    memo.remember(items, 'all', 4);
    expect(memo.find(items.slice(0, 4))).toEqual({ length: 2, value: 'two' });
    expect(memo.find([...items, item(200)])).toEqual({ length: 200, value: 'all' });
  });

  it('does not take a list that only shares the last item for a prefix', () => {
    const memo = new ListPrefixMemo<Item, string>();
    const last = item(9);
    memo.remember([item(1), last], 'a');
    expect(memo.find([item(1), last])).toBeUndefined();
    expect(memo.find([last])).toBeUndefined();
  });
});
