import { createReadFileTool } from './read-file.tool.js';
import { invoke, makeHarness } from './tools.spec-helper.js';

const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
const numbered = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `${String(from + i).padStart(6)}\tline ${from + i}`).join('\n');

describe('read_file tool', () => {
  it('should return the file as cat -n numbered lines', async () => {
    const { sandbox, ctx } = makeHarness();
    await sandbox.write(ctx(), '/a.txt', lines(3));
    const out = await invoke(createReadFileTool(), { file_path: '/a.txt' }, ctx());
    expect(out.text).toBe(numbered(1, 3));
    expect(out.artifact).toEqual({});
  });

  it('should page 500 lines at a time and name the offset to read next', async () => {
    const { sandbox, ctx } = makeHarness();
    await sandbox.write(ctx(), '/big.txt', lines(1200));
    const sut = createReadFileTool();

    const first = await invoke(sut, { file_path: '/big.txt' }, ctx());
    expect(first.text).toBe(`${numbered(1, 500)}\n\n[Lines 1-500 of 1200. To read on, call read_file with offset=500.]`);

    const second = await invoke(sut, { file_path: '/big.txt', offset: 500, limit: 500 }, ctx());
    expect(second.text).toBe(`${numbered(501, 1000)}\n\n[Lines 501-1000 of 1200. To read on, call read_file with offset=1000.]`);

    const last = await invoke(sut, { file_path: '/big.txt', offset: 1000 }, ctx());
    expect(last.text).toBe(numbered(1001, 1200));
  });

  it('should never return more than its maximum lines in one call', async () => {
    const { sandbox, ctx } = makeHarness();
    await sandbox.write(ctx(), '/big.txt', lines(10));
    const out = await invoke(createReadFileTool({ maxReadLines: 3 }), { file_path: '/big.txt', limit: 100 }, ctx());
    expect(out.text).toBe(`${numbered(1, 3)}\n\n[Lines 1-3 of 10. To read on, call read_file with offset=3.]`);
  });

  it('should answer an offset past the end with the number of lines', async () => {
    const { sandbox, ctx } = makeHarness();
    await sandbox.write(ctx(), '/a.txt', lines(3));
    const out = await invoke(createReadFileTool(), { file_path: '/a.txt', offset: 3 }, ctx());
    expect(out.text).toBe('Error: /a.txt has 3 lines; offset 3 is past its end (offsets start at 0). Read from an offset below 3.');
    expect(out.artifact.isError).toBe(true);
    expect(out.message.status).toBe('success'); // the tool node maps isError to "error"
  });

  it('should refuse a binary file with a sentence instead of its bytes', async () => {
    const { vfs, ctx } = makeHarness();
    await vfs.write({ tenantId: 'ten_a', threadId: 'chat-1' }, '/img.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]));
    const out = await invoke(createReadFileTool(), { file_path: '/img.png' }, ctx());
    expect(out.text).toMatch(/^Error: \/img\.png is a binary file \(.+, 8 bytes\); read_file shows text only\. Open it from Python/);
    expect(out.artifact.isError).toBe(true);
  });

  it('should say when a file is empty', async () => {
    const { sandbox, ctx } = makeHarness();
    await sandbox.write(ctx(), '/e.txt', '');
    expect((await invoke(createReadFileTool(), { file_path: '/e.txt' }, ctx())).text).toBe('/e.txt is empty.');
  });

  it('should answer a missing file and a folder as text', async () => {
    const { sandbox, ctx } = makeHarness();
    await sandbox.write(ctx(), '/dir/a.txt', 'x');
    const sut = createReadFileTool();
    expect((await invoke(sut, { file_path: '/missing.txt' }, ctx())).text).toBe(
      'Error: No file or directory at /missing.txt. Check the path with ls or glob.',
    );
    const dir = await invoke(sut, { file_path: '/dir' }, ctx());
    expect(dir.text).toMatch(/^Error: .*\/dir.*List it with ls, or name a file inside it\.$/);
    expect(dir.artifact.isError).toBe(true);
  });
});
