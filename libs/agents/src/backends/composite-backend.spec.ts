import type { TenantsRepository } from '@drydock/core';
import { InMemoryThreadFilesRepository, VfsService } from '@drydock/vfs';
import { makeConfig } from '../../../../test/factories/config.factory.js';
import type { BackendContext } from './backend-protocol.js';
import { CompositeBackend } from './composite-backend.js';
import { mergeStateFiles, StateBackend } from './state-backend.js';
import { createTenantStoreBackend, createThreadStoreBackend } from './store-backend.js';

function makeVfs() {
  const tenants: Pick<TenantsRepository, 'findById'> = {
    findById: async (id) => ({ id, name: id, limits: {}, createdAt: new Date(), updatedAt: new Date() }),
  };
  return new VfsService(new InMemoryThreadFilesRepository(), tenants as TenantsRepository, makeConfig());
}

async function errorOf(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { code: string; message: string };
  }
  throw new Error('expected a rejection');
}

const ctx: BackendContext = { tenantId: 'ten_a', threadId: 'chat-1' };

function setup() {
  const vfs = makeVfs();
  const thread = createThreadStoreBackend(vfs);
  const memories = createTenantStoreBackend(vfs);
  const shared = createTenantStoreBackend(vfs, '__shared__');
  const sut = new CompositeBackend(thread, [
    { prefix: '/memories/', backend: memories },
    { prefix: '/memories/shared/', backend: shared },
  ]);
  return { sut, thread, memories, shared };
}

describe(CompositeBackend.name, () => {
  it('should route each path to the backend of its longest matching prefix, without the prefix', async () => {
    const { sut, thread, memories, shared } = setup();
    await sut.write(ctx, '/notes.md', 'thread\n');
    await sut.write(ctx, '/memories/prefs.md', 'tenant\n');
    await sut.write(ctx, '/memories/shared/team.md', 'shared\n');

    expect(await thread.glob(ctx, '**')).toEqual(['/notes.md']);
    expect(await memories.glob(ctx, '**')).toEqual(['/prefs.md']);
    expect(await shared.glob(ctx, '**')).toEqual(['/team.md']);
    expect(await sut.read(ctx, '/memories/shared/team.md')).toMatchObject({
      kind: 'text',
      path: '/memories/shared/team.md',
      lines: ['shared'],
    });
    expect(await sut.write(ctx, '/memories/b.md', 'x')).toMatchObject({ path: '/memories/b.md', created: true });
    expect(await sut.edit(ctx, '/memories/b.md', 'x', 'y')).toEqual({ path: '/memories/b.md', occurrences: 1 });
  });

  it('should not treat a path that merely starts with the prefix text as routed', async () => {
    const { sut, thread } = setup();
    await sut.write(ctx, '/memories-old/a.md', 'x');
    expect(await thread.glob(ctx, '**')).toEqual(['/memories-old/a.md']);
  });

  it('should list mount points in their parent and hide default files beneath a mount', async () => {
    const { sut, thread } = setup();
    await sut.write(ctx, '/notes.md', 'x');
    await thread.write(ctx, '/memories/shadowed.md', 'hidden');
    await sut.write(ctx, '/memories/prefs.md', 'x');
    await sut.write(ctx, '/memories/shared/team.md', 'x');

    expect((await sut.ls(ctx, '/')).map((e) => [e.path, e.type])).toEqual([
      ['/memories', 'directory'],
      ['/notes.md', 'file'],
    ]);
    expect((await sut.ls(ctx, '/memories')).map((e) => [e.path, e.type])).toEqual([
      ['/memories/prefs.md', 'file'],
      ['/memories/shared', 'directory'],
    ]);
    expect((await sut.ls(ctx, '/memories/shared/')).map((e) => e.path)).toEqual(['/memories/shared/team.md']);
  });

  it('should show a mount point even when its parent folder exists nowhere else', async () => {
    const vfs = makeVfs();
    const sut = new CompositeBackend(createThreadStoreBackend(vfs), { '/data/cache/': createTenantStoreBackend(vfs) });
    expect((await sut.ls(ctx, '/data')).map((e) => [e.path, e.type])).toEqual([['/data/cache', 'directory']]);
    expect(await sut.ls(ctx, '/data/cache')).toEqual([]);
  });

  it('should grep the default backend and every mount beneath the path, with full paths', async () => {
    const { sut, thread } = setup();
    await sut.write(ctx, '/notes.md', 'todo: thread\n');
    await thread.write(ctx, '/memories/shadowed.md', 'todo: hidden\n');
    await sut.write(ctx, '/memories/prefs.md', 'x\ntodo: tenant\n');
    await sut.write(ctx, '/memories/shared/team.md', 'todo: shared\n');

    expect(await sut.grep(ctx, 'todo')).toMatchObject({
      mode: 'files_with_matches',
      files: ['/memories/prefs.md', '/memories/shared/team.md', '/notes.md'],
      truncated: false,
    });
    expect((await sut.grep(ctx, 'todo', { outputMode: 'content' })).matches).toEqual([
      { path: '/memories/prefs.md', line: 2, text: 'todo: tenant' },
      { path: '/memories/shared/team.md', line: 1, text: 'todo: shared' },
      { path: '/notes.md', line: 1, text: 'todo: thread' },
    ]);
    expect((await sut.grep(ctx, 'todo', { path: '/memories', outputMode: 'count' })).counts).toEqual([
      { path: '/memories/prefs.md', count: 1 },
      { path: '/memories/shared/team.md', count: 1 },
    ]);
  });

  it('should apply a grep glob with folders relative to the search path, across mounts', async () => {
    const { sut } = setup();
    await sut.write(ctx, '/memories/prefs.md', 'todo\n');
    await sut.write(ctx, '/memories/shared/team.md', 'todo\n');
    await sut.write(ctx, '/notes.md', 'todo\n');
    expect((await sut.grep(ctx, 'todo', { glob: 'memories/*.md' })).files).toEqual(['/memories/prefs.md']);
    expect((await sut.grep(ctx, 'todo', { glob: 'team.md' })).files).toEqual(['/memories/shared/team.md']);
    expect((await sut.grep(ctx, 'todo', { path: '/memories', glob: 'shared/*.md' })).files).toEqual([
      '/memories/shared/team.md',
    ]);
  });

  it('should glob across mounts with paths mapped back under their prefix', async () => {
    const { sut, thread } = setup();
    await sut.write(ctx, '/notes.md', 'x');
    await thread.write(ctx, '/memories/shadowed.md', 'x');
    await sut.write(ctx, '/memories/prefs.md', 'x');
    await sut.write(ctx, '/memories/shared/team.md', 'x');
    expect(await sut.glob(ctx, '**/*.md')).toEqual(['/memories/prefs.md', '/memories/shared/team.md', '/notes.md']);
    expect(await sut.glob(ctx, 'memories/*.md')).toEqual(['/memories/prefs.md']);
    expect(await sut.glob(ctx, '*.md', '/memories')).toEqual(['/memories/prefs.md']);
    expect(await sut.glob(ctx, '/memories/**/team.md', '/memories')).toEqual(['/memories/shared/team.md']);
  });

  it('should name the full path in errors from a mounted backend', async () => {
    const { sut } = setup();
    const error = await errorOf(sut.read(ctx, '/memories/missing.md'));
    expect(error.code).toBe('FILE_NOT_FOUND');
    expect(error.message).toBe('No file or directory at /memories/missing.md.');
    expect(await errorOf(sut.read(ctx, '/memories'))).toMatchObject({
      code: 'IS_A_DIRECTORY',
      message: '/memories is a directory, not a file.',
    });
  });

  it('should hand a state route its files without the prefix and map its updates back', async () => {
    const vfs = makeVfs();
    const sut = new CompositeBackend(createThreadStoreBackend(vfs), { '/scratch/': new StateBackend() });
    const written = await sut.write(ctx, '/scratch/plan.md', 'step 1\n');
    expect(Object.keys(written.filesUpdate ?? {})).toEqual(['/scratch/plan.md']);

    let files = mergeStateFiles({}, written.filesUpdate);
    expect(await sut.read({ ...ctx, stateFiles: files }, '/scratch/plan.md')).toMatchObject({ lines: ['step 1'] });
    expect((await sut.ls({ ...ctx, stateFiles: files }, '/')).map((e) => e.path)).toEqual(['/scratch']);

    const deleted = await sut.delete({ ...ctx, stateFiles: files }, '/scratch/plan.md');
    expect(deleted).toEqual({ deleted: ['/scratch/plan.md'], filesUpdate: { '/scratch/plan.md': null } });
    files = mergeStateFiles(files, deleted.filesUpdate);
    expect(files).toEqual({});
  });

  it('should refuse prefixes that do not start and end with a slash', () => {
    const backend = new StateBackend();
    expect(() => new CompositeBackend(backend, { memories: backend })).toThrow(/start and end with/);
    expect(() => new CompositeBackend(backend, { '/memories': backend })).toThrow(/start and end with/);
    expect(() => new CompositeBackend(backend, { '/a/../b/': backend })).toThrow(/normalised/);
  });
});
