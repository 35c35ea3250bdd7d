import { createLsTool } from './ls.tool.js';
import { invoke, makeHarness } from './tools.spec-helper.js';

describe('ls tool', () => {
  it('should list folders with a slash and files with their size', async () => {
    const { sandbox, ctx } = makeHarness();
    await sandbox.write(ctx(), '/data/a.csv', 'x,y\n1,2\n');
    await sandbox.write(ctx(), '/notes.md', 'hello');
    const sut = createLsTool();

    const out = await invoke(sut, { path: '/' }, ctx());

    expect(out.text).toBe('/data/\n/notes.md (5 bytes)');
    expect(out.artifact).toEqual({});
    expect(out.message.status).toBe('success');
  });

  it('should list the top folder when no path is given, and say when it is empty', async () => {
    const { ctx } = makeHarness();
    const out = await invoke(createLsTool(), {}, ctx());
    expect(out.text).toBe('/ is empty.');
  });

  it('should answer a missing folder with text that says how to find the path', async () => {
    const { ctx } = makeHarness();
    const out = await invoke(createLsTool(), { path: '/nope' }, ctx());
    expect(out.text).toBe('Error: No file or directory at /nope. Check the path with ls or glob.');
    expect(out.artifact.isError).toBe(true);
  });

  it('should answer an invalid path with text', async () => {
    const { ctx } = makeHarness();
    const out = await invoke(createLsTool(), { path: '/../etc' }, ctx());
    expect(out.text).toMatch(/^Error: Invalid path "\/\.\.\/etc": it climbs above the root directory/);
    expect(out.artifact.isError).toBe(true);
  });

  it('should cap a long listing and say so', async () => {
    const { sandbox, ctx } = makeHarness();
    for (const n of [1, 2, 3]) await sandbox.write(ctx(), `/f${n}.txt`, 'x');
    const out = await invoke(createLsTool({ maxListedPaths: 2 }), { path: '/' }, ctx());
    expect(out.text).toBe('/f1.txt (1 byte)\n/f2.txt (1 byte)\n[Showing the first 2 of 3 entries; list a narrower folder or use glob.]');
  });
});
