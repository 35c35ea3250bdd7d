import { DrydockError } from '@drydock/core';
import { VfsError } from '@drydock/vfs';
import { BackendError } from '../backends/backend.errors.js';
import type { Backend } from '../backends/backend-protocol.js';
import { createReadFileTool } from './read-file.tool.js';
import { isModelFacingError, toolErrorText } from './tool-errors.js';
import { invoke, makeHarness } from './tools.spec-helper.js';

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('tool errors', () => {
  it('should treat filesystem and backend refusals as the model\'s to fix', () => {
    expect(isModelFacingError(VfsError.fileNotFound('/a'))).toBe(true);
    expect(isModelFacingError(BackendError.readOnly('/ro/a'))).toBe(true);
    expect(isModelFacingError(BackendError.invalidConfig('bad route'))).toBe(false);
    expect(isModelFacingError(new DrydockError('DB_DOWN', 'down', 503))).toBe(false);
    expect(isModelFacingError(new Error('boom'))).toBe(false);
  });

  it('should add what to do next to the error\'s own sentence', () => {
    expect(toolErrorText(BackendError.readOnly('/ro/a'), 'write_file', '/ro/a')).toBe(
      'Error: /ro/a is in a read-only folder; write elsewhere.',
    );
    expect(toolErrorText(VfsError.fileExists('/a'), 'write_file', 'a')).toMatch(/^Error: \/a already exists; write_file only creates/);
    expect(toolErrorText(VfsError.fileExists('/a'), 'python_run_prepared', '/a')).toBe(
      'Error: /a already exists; overwrite it explicitly or edit it instead.',
    );
  });

  it('should re-throw failures the model cannot act on', async () => {
    const { ctx } = makeHarness();
    const down = new Error('connection refused');
    const backend = { read: async () => Promise.reject(down) } as unknown as Backend;
    await expect(invoke(createReadFileTool(), { file_path: '/a.txt' }, ctx({ backend }))).rejects.toBe(down);
  });

  it('should refuse to run outside a Drydock agent run', async () => {
    const sut = createReadFileTool();
    await expect(sut.invoke({ id: 'call_1', name: 'read_file', args: { file_path: '/a' }, type: 'tool_call' })).rejects.toMatchObject({
      code: 'TOOL_CONTEXT_MISSING',
    });
  });

  it('should keep two concurrent file calls through one instance in their own threads', async () => {
    const { sandbox, ctx } = makeHarness();
    const one = ctx({ toolCallId: 'call_1' });
    const two = ctx({ tenantId: 'ten_b', threadId: 'chat-2', toolCallId: 'call_2' });
    await sandbox.write(one, '/notes.md', 'thread one\n');
    await sandbox.write(two, '/notes.md', 'thread two\n');
    // The first call's read finishes last.
    const slow: Backend = {
      ...sandbox,
      read: async (c, path, options) => {
        await delay(c.threadId === 'chat-1' ? 30 : 1);
        return sandbox.read(c, path, options);
      },
    };
    const sut = createReadFileTool();

    const [a, b] = await Promise.all([
      invoke(sut, { file_path: '/notes.md' }, { ...one, backend: slow }),
      invoke(sut, { file_path: '/notes.md' }, { ...two, backend: slow }),
    ]);

    expect([a.message.tool_call_id, a.text]).toEqual(['call_1', '     1\tthread one']);
    expect([b.message.tool_call_id, b.text]).toEqual(['call_2', '     1\tthread two']);
  });
});
