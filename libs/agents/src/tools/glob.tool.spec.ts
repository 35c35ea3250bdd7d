import { createGlobTool } from './glob.tool.js';
import { invoke, makeHarness } from './tools.spec-helper.js';

async function seeded() {
  const h = makeHarness();
  for (const p of ['/src/a.py', '/src/lib/b.py', '/src/c.txt', '/README.md']) await h.sandbox.write(h.ctx(), p, 'x');
  return h;
}

describe('glob tool', () => {
  it('should list matching files at any depth, sorted', async () => {
    const { ctx } = await seeded();
    const out = await invoke(createGlobTool(), { pattern: '**/*.py' }, ctx());
    expect(out.text).toBe('/src/a.py\n/src/lib/b.py');
    expect(out.artifact).toEqual({});
  });

  it('should match relative to path', async () => {
    const { ctx } = await seeded();
    const out = await invoke(createGlobTool(), { pattern: '*.py', path: '/src' }, ctx());
    expect(out.text).toBe('/src/a.py');
  });

  it('should say when nothing matches', async () => {
    const { ctx } = await seeded();
    const out = await invoke(createGlobTool(), { pattern: '**/*.csv' }, ctx());
    expect(out.text).toBe('No files match "**/*.csv" under /.');
    expect(out.artifact.isError).toBeUndefined();
  });

  it('should answer an invalid pattern and a missing folder as text', async () => {
    const { ctx } = await seeded();
    const sut = createGlobTool();
    const empty = await invoke(sut, { pattern: '  ' }, ctx());
    expect(empty.text).toBe('Error: Invalid pattern "  ": it is empty.');
    expect(empty.artifact.isError).toBe(true);
    const missing = await invoke(sut, { pattern: '*', path: '/nope' }, ctx());
    expect(missing.text).toBe('Error: No file or directory at /nope. Check the path with ls or glob.');
  });

  it('should cap a long result and say how to narrow it', async () => {
    const { ctx } = await seeded();
    const out = await invoke(createGlobTool({ maxListedPaths: 2 }), { pattern: '**' }, ctx());
    expect(out.text).toBe('/README.md\n/src/a.py\n[Showing the first 2 of 4 files; use a narrower pattern or path.]');
  });
});
