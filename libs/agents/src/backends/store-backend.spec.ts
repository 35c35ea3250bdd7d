import type { TenantsRepository } from '@drydock/core';
import { InMemoryThreadFilesRepository, VfsService } from '@drydock/vfs';
import { makeConfig } from '../../../../test/factories/config.factory.js';
import type { BackendContext } from './backend-protocol.js';
import {
  createTenantStoreBackend,
  createThreadStoreBackend,
  StoreBackend,
  TENANT_STORE_NAMESPACE,
} from './store-backend.js';

function makeVfs() {
  const tenants: Pick<TenantsRepository, 'findById'> = {
    findById: async (id) => ({ id, name: id, limits: {}, createdAt: new Date(), updatedAt: new Date() }),
  };
  return new VfsService(new InMemoryThreadFilesRepository(), tenants as TenantsRepository, makeConfig());
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as { code: string }).code;
  }
  throw new Error('expected a rejection');
}

const a1: BackendContext = { tenantId: 'ten_a', threadId: 'chat-1' };
const a2: BackendContext = { tenantId: 'ten_a', threadId: 'chat-2' };
const b1: BackendContext = { tenantId: 'ten_b', threadId: 'chat-1' };

describe(StoreBackend.name, () => {
  describe('thread store', () => {
    it('should keep each thread its own files', async () => {
      const sut = createThreadStoreBackend(makeVfs());
      await sut.write(a1, '/notes.md', 'one\n');
      expect(await sut.read(a1, '/notes.md')).toMatchObject({ kind: 'text', lines: ['one'], totalLines: 1 });
      expect(await codeOf(sut.read(a2, '/notes.md'))).toBe('FILE_NOT_FOUND');
      expect(await codeOf(sut.read(b1, '/notes.md'))).toBe('FILE_NOT_FOUND');
    });

    it('should refuse a thread id no client could have chosen, such as the tenant namespace', async () => {
      const sut = createThreadStoreBackend(makeVfs());
      expect(await codeOf(sut.ls({ tenantId: 'ten_a', threadId: TENANT_STORE_NAMESPACE }, '/'))).toBe('INVALID_THREAD_ID');
      expect(await codeOf(sut.ls({ tenantId: 'ten_a', threadId: '' }, '/'))).toBe('INVALID_THREAD_ID');
    });

    it('should return typed read results with the VFS numbering', async () => {
      const sut = createThreadStoreBackend(makeVfs());
      await sut.write(a1, '/a.txt', 'x\ny\nz\n');
      expect(await sut.read(a1, '/a.txt', { offset: 1, limit: 1 })).toEqual({
        kind: 'text',
        path: '/a.txt',
        offset: 1,
        lines: ['y'],
        numbered: '     2\ty',
        totalLines: 3,
        more: true,
      });
      expect(await sut.read(a1, '/a.txt', { offset: 3 })).toEqual({ kind: 'past_end', path: '/a.txt', offset: 3, totalLines: 3 });
      await sut.write(a1, '/empty.txt', '');
      expect(await sut.read(a1, '/empty.txt')).toEqual({ kind: 'empty', path: '/empty.txt' });
    });

    it('should refuse to overwrite when asked to create, and edit with the VFS rules', async () => {
      const sut = createThreadStoreBackend(makeVfs());
      expect(await sut.write(a1, '/a.txt', 'one one')).toMatchObject({ path: '/a.txt', created: true, size: 7 });
      expect(await codeOf(sut.write(a1, '/a.txt', 'two', { overwrite: false }))).toBe('FILE_EXISTS');
      expect(await codeOf(sut.edit(a1, '/a.txt', 'one', 'two'))).toBe('AMBIGUOUS_MATCH');
      expect(await sut.edit(a1, '/a.txt', 'one', 'two', true)).toEqual({ path: '/a.txt', occurrences: 2 });
    });
  });

  describe('tenant-wide store', () => {
    it('should share files between the threads of one tenant', async () => {
      const sut = createTenantStoreBackend(makeVfs());
      await sut.write(a1, '/prefs.md', 'likes tea\n');
      expect(await sut.read(a2, '/prefs.md')).toMatchObject({ kind: 'text', lines: ['likes tea'] });
      expect(await sut.glob(a2, '*.md')).toEqual(['/prefs.md']);
    });

    it('should not share files between tenants', async () => {
      const sut = createTenantStoreBackend(makeVfs());
      await sut.write(a1, '/prefs.md', 'likes tea\n');
      expect(await codeOf(sut.read(b1, '/prefs.md'))).toBe('FILE_NOT_FOUND');
      expect(await sut.ls(b1, '/')).toEqual([]);
    });

    it('should not mix with any thread of the tenant', async () => {
      const vfs = makeVfs();
      const tenantStore = createTenantStoreBackend(vfs);
      const threadStore = createThreadStoreBackend(vfs);
      await tenantStore.write(a1, '/prefs.md', 'x');
      expect(await threadStore.ls(a1, '/')).toEqual([]);
      expect(await vfs.exists({ tenantId: 'ten_a', threadId: TENANT_STORE_NAMESPACE }, '/prefs.md')).toBe(true);
    });

    it('should only accept namespaces that cannot be client thread ids', () => {
      const vfs = makeVfs();
      expect(() => createTenantStoreBackend(vfs, 'memories')).toThrow(/must start with "__"/);
      expect(() => createTenantStoreBackend(vfs, '__memories:v2')).not.toThrow();
    });
  });
});
