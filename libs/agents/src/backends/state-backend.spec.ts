import type { BackendContext, StateFiles } from './backend-protocol.js';
import { mergeStateFiles, StateBackend } from './state-backend.js';

const now = new Date('2025-01-02T03:04:05.000Z');
const ctx = (stateFiles: StateFiles = {}): BackendContext => ({ tenantId: 'ten_a', threadId: 'chat-1', stateFiles });

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as { code: string }).code;
  }
  throw new Error('expected a rejection');
}

describe(StateBackend.name, () => {
  it('should return a write as a state update and leave the snapshot alone', async () => {
    const sut = new StateBackend({ now: () => now });
    const snapshot: StateFiles = {};
    const result = await sut.write(ctx(snapshot), '/plan.md', 'a\nb\n');
    expect(result).toEqual({
      path: '/plan.md',
      created: true,
      size: 4,
      filesUpdate: {
        '/plan.md': { content: ['a', 'b', ''], created_at: now.toISOString(), modified_at: now.toISOString() },
      },
    });
    expect(snapshot).toEqual({});
  });

  it('should read what the merged update holds, exactly', async () => {
    const sut = new StateBackend({ now: () => now });
    const files = mergeStateFiles({}, (await sut.write(ctx(), '/plan.md', 'a\nb\n')).filesUpdate);
    expect(await sut.read(ctx(files), '/plan.md')).toMatchObject({ kind: 'text', lines: ['a', 'b'], totalLines: 2 });
    const edited = await sut.edit(ctx(files), '/plan.md', 'b', 'c');
    const next = mergeStateFiles(files, edited.filesUpdate);
    expect((next['/plan.md'].content as string[]).join('\n')).toBe('a\nc\n');
  });

  it('should read plain-string content and list implied folders', async () => {
    const sut = new StateBackend();
    const files: StateFiles = { '/a/b.txt': { content: 'x', modified_at: now.toISOString() } };
    expect(await sut.read(ctx(files), '/a/b.txt')).toMatchObject({ kind: 'text', lines: ['x'] });
    expect(await sut.ls(ctx(files), '/')).toEqual([{ path: '/a', type: 'directory', size: 0, modifiedAt: now }]);
    expect(await codeOf(sut.read(ctx(files), '/a'))).toBe('IS_A_DIRECTORY');
    expect(await codeOf(sut.write(ctx(files), '/a/b.txt/c', 'x'))).toBe('FILE_EXISTS');
  });

  it('should delete with null entries that the reducer removes', async () => {
    const sut = new StateBackend();
    const files: StateFiles = {
      '/a/1.txt': { content: ['1'], modified_at: now.toISOString() },
      '/a/2.txt': { content: ['2'], modified_at: now.toISOString() },
      '/b.txt': { content: ['b'], modified_at: now.toISOString() },
    };
    const result = await sut.delete(ctx(files), '/a');
    expect(result).toEqual({ deleted: ['/a/1.txt', '/a/2.txt'], filesUpdate: { '/a/1.txt': null, '/a/2.txt': null } });
    expect(Object.keys(mergeStateFiles(files, result.filesUpdate))).toEqual(['/b.txt']);
  });

  it('should cap file size, since every file is checkpointed', async () => {
    const sut = new StateBackend({ maxFileBytes: 10 });
    expect(await codeOf(sut.write(ctx(), '/big.txt', 'x'.repeat(11)))).toBe('FILE_TOO_LARGE');
  });
});
