import { StateBackend } from '../backends/state-backend.js';
import { createDeleteFileTool } from './delete-file.tool.js';
import { invoke, makeHarness } from './tools.spec-helper.js';

const scope = { tenantId: 'ten_a', threadId: 'chat-1' };

describe('delete_file tool', () => {
  it('should delete a file', async () => {
    const { vfs, sandbox, ctx } = makeHarness();
    await sandbox.write(ctx(), '/tmp/old.csv', 'x');
    const out = await invoke(createDeleteFileTool(), { file_path: '/tmp/old.csv' }, ctx());
    expect(out.text).toBe('Deleted /tmp/old.csv.');
    expect(await vfs.exists(scope, '/tmp/old.csv')).toBe(false);
  });

  it('should delete a folder and name what went with it', async () => {
    const { vfs, sandbox, ctx } = makeHarness();
    await sandbox.write(ctx(), '/out/a.csv', 'x');
    await sandbox.write(ctx(), '/out/b/c.csv', 'x');
    const out = await invoke(createDeleteFileTool(), { file_path: '/out' }, ctx());
    expect(out.text).toBe('Deleted the folder /out and the 2 files in it:\n- /out/a.csv\n- /out/b/c.csv');
    expect(await vfs.exists(scope, '/out/a.csv')).toBe(false);
  });

  it('should answer a missing file as text', async () => {
    const { ctx } = makeHarness();
    const out = await invoke(createDeleteFileTool(), { file_path: '/nope.txt' }, ctx());
    expect(out.text).toBe('Error: No file or directory at /nope.txt. Check the path with ls or glob.');
    expect(out.artifact.isError).toBe(true);
  });

  it('should refuse to empty the whole thread', async () => {
    const { vfs, sandbox, ctx } = makeHarness();
    await sandbox.write(ctx(), '/keep.txt', 'x');
    const out = await invoke(createDeleteFileTool(), { file_path: '/' }, ctx());
    expect(out.text).toBe('Error: delete_file does not delete the top folder /; delete specific files or folders.');
    expect(await vfs.exists(scope, '/keep.txt')).toBe(true);
  });

  it('should hand back a state-backed delete as null entries for the graph', async () => {
    const { ctx } = makeHarness();
    const stateFiles = { '/plan.md': { content: ['x'], modified_at: '2025-01-01T00:00:00.000Z' } };
    const out = await invoke(createDeleteFileTool(), { file_path: '/plan.md' }, ctx({ backend: new StateBackend(), stateFiles }));
    expect(out.text).toBe('Deleted /plan.md.');
    expect(out.artifact).toEqual({ filesUpdate: { '/plan.md': null } });
  });
});
