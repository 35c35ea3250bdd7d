import { StateBackend } from '../backends/state-backend.js';
import { createEditFileTool } from './edit-file.tool.js';
import { invoke, makeHarness } from './tools.spec-helper.js';

const scope = { tenantId: 'ten_a', threadId: 'chat-1' };

describe('edit_file tool', () => {
  it('should replace one exact occurrence', async () => {
    const { vfs, sandbox, ctx } = makeHarness();
    await sandbox.write(ctx(), '/app.py', 'x = 1\ny = 2\n');
    const out = await invoke(createEditFileTool(), { file_path: '/app.py', old_string: 'y = 2', new_string: 'y = 3' }, ctx());
    expect(out.text).toBe('Edited /app.py: replaced 1 occurrence.');
    expect((await vfs.readContent(scope, '/app.py')).content.toString()).toBe('x = 1\ny = 3\n');
  });

  it('should refuse an ambiguous edit, say how to resolve it, and leave the file alone', async () => {
    const { vfs, sandbox, ctx } = makeHarness();
    await sandbox.write(ctx(), '/app.py', 'a = 0\na = 0\n');
    const out = await invoke(createEditFileTool(), { file_path: '/app.py', old_string: 'a = 0', new_string: 'a = 1' }, ctx());
    expect(out.text).toBe(
      'Error: The text to replace occurs 2 times in /app.py; include more surrounding text to make it unique, or replace all occurrences. ' +
        'To replace every occurrence, call edit_file with replace_all set to true.',
    );
    expect(out.artifact.isError).toBe(true);
    expect((await vfs.readContent(scope, '/app.py')).content.toString()).toBe('a = 0\na = 0\n');
  });

  it('should replace every occurrence with replace_all', async () => {
    const { vfs, sandbox, ctx } = makeHarness();
    await sandbox.write(ctx(), '/app.py', 'a = 0\na = 0\n');
    const out = await invoke(
      createEditFileTool(),
      { file_path: '/app.py', old_string: 'a = 0', new_string: 'a = 1', replace_all: true },
      ctx(),
    );
    expect(out.text).toBe('Edited /app.py: replaced 2 occurrences.');
    expect((await vfs.readContent(scope, '/app.py')).content.toString()).toBe('a = 1\na = 1\n');
  });

  it('should answer text that is not in the file', async () => {
    const { sandbox, ctx } = makeHarness();
    await sandbox.write(ctx(), '/app.py', 'x = 1\n');
    const out = await invoke(createEditFileTool(), { file_path: '/app.py', old_string: 'x=1', new_string: 'x=2' }, ctx());
    expect(out.text).toBe(
      'Error: The text to replace was not found in /app.py; read the file and copy the text exactly, including whitespace.',
    );
    expect(out.artifact.isError).toBe(true);
  });

  it('should refuse to edit a binary file', async () => {
    const { vfs, ctx } = makeHarness();
    await vfs.write(scope, '/img.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1]));
    const out = await invoke(createEditFileTool(), { file_path: '/img.png', old_string: 'P', new_string: 'Q' }, ctx());
    expect(out.text).toMatch(/^Error: \/img\.png is a binary file .*Work with it from Python \(execute_python\) instead\.$/);
  });

  it('should hand back a state-backed edit as a files update', async () => {
    const { ctx } = makeHarness();
    const stateFiles = { '/plan.md': { content: ['todo: a'], modified_at: '2025-01-01T00:00:00.000Z' } };
    const out = await invoke(
      createEditFileTool(),
      { file_path: '/plan.md', old_string: 'a', new_string: 'b' },
      ctx({ backend: new StateBackend(), stateFiles }),
    );
    expect(out.text).toBe('Edited /plan.md: replaced 1 occurrence.');
    expect(out.artifact.filesUpdate?.['/plan.md']?.content).toEqual(['todo: b']);
  });
});
