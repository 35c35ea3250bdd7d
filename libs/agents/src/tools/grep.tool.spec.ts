import { StateBackend } from '../backends/state-backend.js';
import { createGrepTool } from './grep.tool.js';
import { invoke, makeHarness } from './tools.spec-helper.js';

async function seeded() {
  const h = makeHarness();
  await h.sandbox.write(h.ctx(), '/src/a.py', 'import os\nprint(os.getcwd())\nos.listdir()\n');
  await h.sandbox.write(h.ctx(), '/src/b.py', 'print("hi")\n');
  await h.sandbox.write(h.ctx(), '/notes.md', 'use os.path\n');
  return h;
}

describe('grep tool', () => {
  it('should list the files that match by default', async () => {
    const { ctx } = await seeded();
    const out = await invoke(createGrepTool(), { pattern: 'os.' }, ctx());
    expect(out.text).toBe('/notes.md\n/src/a.py');
    expect(out.artifact).toEqual({});
  });

  it('should list matching lines as path:line:text in content mode', async () => {
    const { ctx } = await seeded();
    const out = await invoke(createGrepTool(), { pattern: 'os.', path: '/src', output_mode: 'content' }, ctx());
    expect(out.text).toBe('/src/a.py:2:print(os.getcwd())\n/src/a.py:3:os.listdir()');
  });

  it('should count matching lines per file in count mode', async () => {
    const { ctx } = await seeded();
    const out = await invoke(createGrepTool(), { pattern: 'os', output_mode: 'count' }, ctx());
    expect(out.text).toBe('/notes.md: 1\n/src/a.py: 3');
  });

  it('should filter by glob and match regular expressions when asked', async () => {
    const { ctx } = await seeded();
    const out = await invoke(createGrepTool(), { pattern: '^print\\(', regex: true, glob: '*.py' }, ctx());
    expect(out.text).toBe('/src/a.py\n/src/b.py');
  });

  it('should take the pattern literally unless regex is set', async () => {
    const { ctx } = await seeded();
    const out = await invoke(createGrepTool(), { pattern: 'print(' }, ctx());
    expect(out.text).toBe('/src/a.py\n/src/b.py');
  });

  it('should say when nothing matches', async () => {
    const { ctx } = await seeded();
    const sut = createGrepTool();
    expect((await invoke(sut, { pattern: 'zebra' }, ctx())).text).toBe('No matches for "zebra" under /.');
    expect((await invoke(sut, { pattern: 'zebra', glob: '*.md' }, ctx())).text).toBe(
      'No matches for "zebra" under / (files matching "*.md").',
    );
  });

  it('should answer an invalid regular expression as text', async () => {
    const { ctx } = await seeded();
    const out = await invoke(createGrepTool(), { pattern: 'a(b', regex: true }, ctx({ backend: new StateBackend() }));
    expect(out.text).toMatch(/^Error: Invalid pattern "a\(b": /);
    expect(out.artifact.isError).toBe(true);
  });

  it('should say when it stopped at its limit', async () => {
    const { ctx } = await seeded();
    const out = await invoke(createGrepTool({ maxListedPaths: 1 }), { pattern: 'os', output_mode: 'content' }, ctx());
    expect(out.text.split('\n')[0]).toBe('/notes.md:1:use os.path');
    expect(out.text).toMatch(/\n\[Showing the first 1 matching lines; narrow the search with path or glob, or raise maxMatches\.\]$/);
  });
});
