import { StateBackend } from '../backends/state-backend.js';
import { createWriteFileTool } from './write-file.tool.js';
import { invoke, makeHarness } from './tools.spec-helper.js';

const scope = { tenantId: 'ten_a', threadId: 'chat-1' };

describe('write_file tool', () => {
  it('should create a new file in the thread', async () => {
    const { vfs, ctx } = makeHarness();
    const out = await invoke(createWriteFileTool(), { file_path: 'reports/summary.md', content: '# Summary\n' }, ctx());
    expect(out.text).toBe('Created /reports/summary.md (10 bytes).');
    expect(out.artifact).toEqual({});
    expect((await vfs.readContent(scope, '/reports/summary.md')).content.toString()).toBe('# Summary\n');
  });

  it('should refuse to overwrite an existing file, say what to use instead, and leave it alone', async () => {
    const { vfs, sandbox, ctx } = makeHarness();
    await sandbox.write(ctx(), '/a.txt', 'original');
    const out = await invoke(createWriteFileTool(), { file_path: '/a.txt', content: 'new' }, ctx());
    expect(out.text).toBe(
      'Error: /a.txt already exists; write_file only creates new files. ' +
        'Read it and change it with edit_file, replace all of it with file_write, or choose a new path.',
    );
    expect(out.artifact.isError).toBe(true);
    expect((await vfs.readContent(scope, '/a.txt')).content.toString()).toBe('original');
  });

  it('should name the file in the way when a parent folder is a file', async () => {
    const { sandbox, ctx } = makeHarness();
    await sandbox.write(ctx(), '/a', 'x');
    const out = await invoke(createWriteFileTool(), { file_path: '/a/b.txt', content: 'y' }, ctx());
    expect(out.text).toBe('Error: Cannot create /a/b.txt: /a is a file, not a directory.');
  });

  it('should hand back a state-backed write as a files update for the graph', async () => {
    const { ctx } = makeHarness();
    const now = new Date('2025-01-02T03:04:05.000Z');
    const out = await invoke(
      createWriteFileTool(),
      { file_path: '/plan.md', content: 'a\nb' },
      ctx({ backend: new StateBackend({ now: () => now }) }),
    );
    expect(out.text).toBe('Created /plan.md (3 bytes).');
    expect(out.artifact).toEqual({
      filesUpdate: { '/plan.md': { content: ['a', 'b'], created_at: now.toISOString(), modified_at: now.toISOString() } },
    });
  });

  it('should refuse an existing state file too, as the model reads it in state', async () => {
    const { ctx } = makeHarness();
    const stateFiles = { '/plan.md': { content: ['x'], modified_at: '2025-01-01T00:00:00.000Z' } };
    const out = await invoke(createWriteFileTool(), { file_path: '/plan.md', content: 'y' }, ctx({ backend: new StateBackend(), stateFiles }));
    expect(out.text).toMatch(/^Error: \/plan\.md already exists; write_file only creates new files\./);
    expect(out.artifact).toEqual({ isError: true });
  });
});
