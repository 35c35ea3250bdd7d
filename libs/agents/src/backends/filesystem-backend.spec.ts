import { existsSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BackendContext } from './backend-protocol.js';
import { FilesystemBackend } from './filesystem-backend.js';

const ctx: BackendContext = { tenantId: 'ten_a', threadId: 'chat-1' };

async function errorOf(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { code: string; message: string };
  }
  throw new Error('expected a rejection');
}

describe(FilesystemBackend.name, () => {
  let tmp: string;
  let root: string;
  let outside: string;

  beforeEach(async () => {
    tmp = await fs.mkdtemp(join(tmpdir(), 'drydock-fs-backend-'));
    root = join(tmp, 'root');
    outside = join(tmp, 'outside');
    await fs.mkdir(join(root, 'docs'), { recursive: true });
    await fs.mkdir(outside);
    await fs.writeFile(join(root, 'docs', 'readme.md'), 'hello\nworld\n');
    await fs.writeFile(join(outside, 'secret.txt'), 'top secret\n');
  });

  afterEach(async () => {
    await fs.rm(tmp, { recursive: true, force: true });
  });

  it('should read, write and edit files beneath its root', async () => {
    const sut = new FilesystemBackend({ rootDir: root });
    expect(await sut.read(ctx, '/docs/readme.md')).toMatchObject({ kind: 'text', lines: ['hello', 'world'] });
    expect(await sut.write(ctx, '/new/deep/a.txt', 'one two')).toEqual({ path: '/new/deep/a.txt', created: true, size: 7 });
    expect(await fs.readFile(join(root, 'new', 'deep', 'a.txt'), 'utf8')).toBe('one two');
    expect(await sut.edit(ctx, '/new/deep/a.txt', 'two', 'three')).toEqual({ path: '/new/deep/a.txt', occurrences: 1 });
    expect(await fs.readFile(join(root, 'new', 'deep', 'a.txt'), 'utf8')).toBe('one three');
    expect((await errorOf(sut.write(ctx, '/new/deep/a.txt', 'x', { overwrite: false }))).code).toBe('FILE_EXISTS');
  });

  it('should refuse a path climbing out of the root with ..', async () => {
    const sut = new FilesystemBackend({ rootDir: root });
    expect((await errorOf(sut.read(ctx, '../outside/secret.txt'))).code).toBe('INVALID_PATH');
    expect((await errorOf(sut.read(ctx, '/docs/../../outside/secret.txt'))).code).toBe('INVALID_PATH');
    expect((await errorOf(sut.write(ctx, '/../outside/evil.txt', 'x'))).code).toBe('INVALID_PATH');
    expect(existsSync(join(outside, 'evil.txt'))).toBe(false);
  });

  it('should refuse a symbolic link pointing outside the root, for reads and writes', async () => {
    await fs.symlink(join(outside, 'secret.txt'), join(root, 'leak.txt'));
    await fs.symlink(outside, join(root, 'escape'));
    const sut = new FilesystemBackend({ rootDir: root });

    expect((await errorOf(sut.read(ctx, '/leak.txt'))).code).toBe('PATH_OUTSIDE_ROOT');
    expect((await errorOf(sut.read(ctx, '/escape/secret.txt'))).code).toBe('PATH_OUTSIDE_ROOT');
    expect((await errorOf(sut.write(ctx, '/leak.txt', 'overwritten'))).code).toBe('PATH_OUTSIDE_ROOT');
    expect((await errorOf(sut.write(ctx, '/escape/planted.txt', 'x'))).code).toBe('PATH_OUTSIDE_ROOT');
    expect((await errorOf(sut.edit(ctx, '/leak.txt', 'top', 'no'))).code).toBe('PATH_OUTSIDE_ROOT');
    expect((await errorOf(sut.ls(ctx, '/escape'))).code).toBe('PATH_OUTSIDE_ROOT');

    expect(await fs.readFile(join(outside, 'secret.txt'), 'utf8')).toBe('top secret\n');
    expect(existsSync(join(outside, 'planted.txt'))).toBe(false);
  });

  it('should leave links to outside out of listings and searches', async () => {
    await fs.symlink(join(outside, 'secret.txt'), join(root, 'leak.txt'));
    await fs.symlink(outside, join(root, 'escape'));
    const sut = new FilesystemBackend({ rootDir: root });
    expect((await sut.ls(ctx, '/')).map((e) => e.path)).toEqual(['/docs']);
    expect(await sut.glob(ctx, '**')).toEqual(['/docs/readme.md']);
    expect((await sut.grep(ctx, 'secret')).files).toEqual([]);
  });

  it('should follow a link that stays inside the root', async () => {
    await fs.symlink(join(root, 'docs', 'readme.md'), join(root, 'alias.md'));
    const sut = new FilesystemBackend({ rootDir: root });
    expect(await sut.read(ctx, '/alias.md')).toMatchObject({ kind: 'text', path: '/alias.md', lines: ['hello', 'world'] });
    expect((await sut.ls(ctx, '/')).map((e) => [e.path, e.type])).toEqual([
      ['/alias.md', 'file'],
      ['/docs', 'directory'],
    ]);
  });

  it('should refuse to read or write files over its size caps', async () => {
    await fs.writeFile(join(root, 'big.txt'), 'x'.repeat(2048));
    const sut = new FilesystemBackend({ rootDir: root, maxReadBytes: 1024, maxWriteBytes: 1024 });
    expect((await errorOf(sut.read(ctx, '/big.txt'))).code).toBe('FILE_TOO_LARGE');
    expect((await errorOf(sut.write(ctx, '/too-big.txt', 'y'.repeat(1025)))).code).toBe('FILE_TOO_LARGE');
    expect(existsSync(join(root, 'too-big.txt'))).toBe(false);
  });

  it('should give each tenant its own folder when per-tenant', async () => {
    const sut = new FilesystemBackend({ rootDir: root, perTenant: true });
    const other: BackendContext = { tenantId: 'ten_b', threadId: 'chat-1' };
    await sut.write(ctx, '/a.txt', 'mine');
    expect(await fs.readFile(join(root, 'ten_a', 'a.txt'), 'utf8')).toBe('mine');
    expect((await errorOf(sut.read(other, '/a.txt'))).code).toBe('FILE_NOT_FOUND');
    expect(await sut.ls(other, '/')).toEqual([]);
    expect((await errorOf(sut.ls({ tenantId: '../ten_a', threadId: 'x' }, '/'))).code).toBe('TENANT_REQUIRED');
  });

  it('should refuse changes in a read-only folder', async () => {
    const sut = new FilesystemBackend({ rootDir: root, readOnly: true });
    expect((await errorOf(sut.write(ctx, '/x.txt', 'x'))).code).toBe('READ_ONLY');
    expect((await errorOf(sut.edit(ctx, '/docs/readme.md', 'hello', 'bye'))).code).toBe('READ_ONLY');
    expect((await errorOf(sut.delete(ctx, '/docs'))).code).toBe('READ_ONLY');
  });

  it('should grep and glob with paths relative to the root', async () => {
    await fs.writeFile(join(root, 'docs', 'notes.txt'), 'todo: one\nnothing\ntodo: two\n');
    const sut = new FilesystemBackend({ rootDir: root });
    expect(await sut.glob(ctx, '**/*.txt')).toEqual(['/docs/notes.txt']);
    expect(await sut.grep(ctx, 'todo', { outputMode: 'content' })).toMatchObject({
      matches: [
        { path: '/docs/notes.txt', line: 1, text: 'todo: one' },
        { path: '/docs/notes.txt', line: 3, text: 'todo: two' },
      ],
    });
    expect((await sut.grep(ctx, '^t.do', { regex: true, outputMode: 'count' })).counts).toEqual([
      { path: '/docs/notes.txt', count: 2 },
    ]);
  });

  it('should stop a catastrophic regex instead of stalling', async () => {
    await fs.writeFile(join(root, 'docs', 'a.txt'), `${'a'.repeat(40)}!\n`);
    const sut = new FilesystemBackend({ rootDir: root, regexBudgetMs: 100 });
    expect((await errorOf(sut.grep(ctx, '^(a+)+$', { regex: true }))).code).toBe('SEARCH_TIMEOUT');
  });

  it('should delete a link itself, not what it points to', async () => {
    await fs.symlink(join(outside, 'secret.txt'), join(root, 'leak.txt'));
    const sut = new FilesystemBackend({ rootDir: root });
    expect(await sut.delete(ctx, '/leak.txt')).toEqual({ deleted: ['/leak.txt'] });
    expect(existsSync(join(outside, 'secret.txt'))).toBe(true);
    expect(await sut.delete(ctx, '/docs')).toEqual({ deleted: ['/docs/readme.md'] });
    expect(existsSync(join(root, 'docs'))).toBe(false);
  });
});
