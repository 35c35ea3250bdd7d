import { jest } from '@jest/globals';
import { FakeSandbox, inMemoryVfs, okOutcome } from '../../../../test/fakes/fake-sandbox.js';
import { newFileSyncState, SessionFileSync, type FileSyncState } from './session-file-sync.js';

const scope = { tenantId: 'ten_a', threadId: 'chat-1' };
const report = (over: Partial<{ changed: string[]; deleted: string[]; skipped: { path: string; reason: 'symlink' }[] }> = {}) => ({
  changed: [],
  deleted: [],
  skipped: [],
  ...over,
});

describe(SessionFileSync.name, () => {
  let files: ReturnType<typeof inMemoryVfs>;
  let sut: SessionFileSync;
  let sandbox: FakeSandbox;
  let state: FileSyncState;

  const setup = (env: Record<string, string> = {}) => {
    files = inMemoryVfs(env);
    sut = new SessionFileSync(files.vfs, files.config);
    sandbox = new FakeSandbox('c1', async () => okOutcome());
    state = newFileSyncState(sandbox.id);
  };
  beforeEach(() => setup());

  const text = (path: string) => sandbox.session.get(path)?.toString('utf8');

  describe('push', () => {
    it('should copy every file of the thread into a new sandbox', async () => {
      await files.vfs.writeMany(scope, [
        { path: '/data/in.csv', content: 'a,b\n1,2\n' },
        { path: '/notes.md', content: '# hi' },
      ]);
      await sut.push(scope, sandbox, state);
      expect(text('/data/in.csv')).toBe('a,b\n1,2\n');
      expect(text('/notes.md')).toBe('# hi');
      expect(state.revision).toBe(await files.vfs.revision(scope));
    });

    it('should push nothing when the thread did not change since the last push', async () => {
      await files.vfs.write(scope, '/a.txt', 'x');
      await sut.push(scope, sandbox, state);
      await sut.push(scope, sandbox, state);
      expect(sandbox.puts).toHaveLength(1);
      expect(sandbox.deletes).toHaveLength(0);
    });

    it('should push only what changed, and delete what the thread deleted', async () => {
      await files.vfs.writeMany(scope, [
        { path: '/keep.txt', content: 'k' },
        { path: '/gone.txt', content: 'g' },
      ]);
      await sut.push(scope, sandbox, state);
      await files.vfs.write(scope, '/new.txt', 'n');
      await files.vfs.delete(scope, '/gone.txt');
      await sut.push(scope, sandbox, state);
      expect(sandbox.puts[1]).toEqual(['/new.txt']);
      expect(sandbox.deletes).toEqual([['/gone.txt']]);
      expect([...sandbox.session.keys()].sort()).toEqual(['/keep.txt', '/new.txt']);
    });

    it('should skip the revision lookup when the caller names the revision the sandbox holds', async () => {
      await files.vfs.write(scope, '/a.txt', 'x');
      await sut.push(scope, sandbox, state);
      const lookup = jest.spyOn(files.vfs, 'revision');
      await sut.push(scope, sandbox, state, state.revision);
      expect(lookup).not.toHaveBeenCalled();
      expect(sandbox.puts).toHaveLength(1);
    });

    it('should look the thread up when the named revision is not the one the sandbox holds', async () => {
      await files.vfs.write(scope, '/a.txt', 'x');
      await sut.push(scope, sandbox, state);
      const held = state.revision;
      await files.vfs.write(scope, '/b.txt', 'y');
      // Newer (the gateway read it after the write) and older (a stale or restored
      // revision) both bring the sandbox up to the thread's current files.
      await sut.push(scope, sandbox, state, held + 1);
      expect(text('/b.txt')).toBe('y');
      await files.vfs.write(scope, '/c.txt', 'z');
      await sut.push(scope, sandbox, state, held - 1);
      expect(text('/c.txt')).toBe('z');
    });

    it('should copy everything into a new sandbox whatever revision is named', async () => {
      await files.vfs.write(scope, '/a.txt', 'x');
      await sut.push(scope, sandbox, state, -1);
      expect(text('/a.txt')).toBe('x');
    });
  });

  describe('pull', () => {
    it('should write files the code changed into the thread and list them', async () => {
      await sut.push(scope, sandbox, state);
      sandbox.session.set('/out/summary.csv', Buffer.from('n\n3\n'));
      const result = await sut.pull(scope, sandbox, state, report({ changed: ['/out/summary.csv'] }));
      expect(result).toEqual({ changed: ['/out/summary.csv'], deleted: [], skipped: [] });
      expect((await files.vfs.readContent(scope, '/out/summary.csv')).content.toString()).toBe('n\n3\n');
    });

    it('should delete from the thread the files the code deleted', async () => {
      await files.vfs.write(scope, '/old.txt', 'bye');
      await sut.push(scope, sandbox, state);
      sandbox.session.delete('/old.txt');
      const result = await sut.pull(scope, sandbox, state, report({ deleted: ['/old.txt', '/never-synced.tmp'] }));
      expect(result.deleted).toEqual(['/old.txt']);
      expect(await files.vfs.exists(scope, '/old.txt')).toBe(false);
    });

    it('should not push back what it just read from the sandbox', async () => {
      await sut.push(scope, sandbox, state);
      sandbox.session.set('/made.txt', Buffer.from('by code'));
      await sut.pull(scope, sandbox, state, report({ changed: ['/made.txt'] }));
      await sut.push(scope, sandbox, state);
      expect(sandbox.puts.flat()).not.toContain('/made.txt');
      expect(state.revision).toBe(await files.vfs.revision(scope));
    });

    it('should still push a file the API wrote while the code was running', async () => {
      await sut.push(scope, sandbox, state);
      await files.vfs.write(scope, '/from-api.txt', 'api'); // during the run
      sandbox.session.set('/made.txt', Buffer.from('code'));
      await sut.pull(scope, sandbox, state, report({ changed: ['/made.txt'] }));
      await sut.push(scope, sandbox, state);
      expect(text('/from-api.txt')).toBe('api');
      expect(sandbox.puts.flat()).not.toContain('/made.txt');
    });

    it('should skip a file over the size limit with a note and keep the others', async () => {
      setup({ VFS_MAX_FILE_BYTES: '10' });
      sandbox.session.set('/big.bin', Buffer.alloc(11));
      sandbox.session.set('/small.txt', Buffer.from('ok'));
      const result = await sut.pull(scope, sandbox, state, report({ changed: ['/big.bin', '/small.txt'] }));
      expect(result.changed).toEqual(['/small.txt']);
      expect(result.skipped).toEqual([{ path: '/big.bin', reason: 'too-large' }]);
      expect(await files.vfs.exists(scope, '/big.bin')).toBe(false);
    });

    it('should pass on what the sandbox reported as not mirrorable, and names the thread cannot hold', async () => {
      const nfd = '/cafe\u0301.txt';
      sandbox.session.set(nfd, Buffer.from('x'));
      const result = await sut.pull(
        scope,
        sandbox,
        state,
        report({ changed: [nfd], skipped: [{ path: '/pw', reason: 'symlink' }] }),
      );
      expect(result.skipped).toEqual([
        { path: nfd, reason: 'invalid-path' },
        { path: '/pw', reason: 'symlink' },
      ]);
      expect(await files.vfs.ls(scope, '/')).toEqual([]);
    });

    it('should report a failed read-back and retry it after the next run', async () => {
      sandbox.session.set('/a.txt', Buffer.from('a'));
      sandbox.session.set('/b.txt', Buffer.from('b'));
      sandbox.failReadAfter = 0;
      const first = await sut.pull(scope, sandbox, state, report({ changed: ['/a.txt', '/b.txt'] }));
      expect(first.changed).toEqual([]);
      expect(first.skipped).toEqual([
        { path: '/a.txt', reason: 'sync-error' },
        { path: '/b.txt', reason: 'sync-error' },
      ]);
      const next = await sut.pull(scope, sandbox, state, report());
      expect(next.changed).toEqual(['/a.txt', '/b.txt']);
      expect(await files.vfs.exists(scope, '/b.txt')).toBe(true);
    });

    it('should mirror the other files when one is still being written, and that one after the next run', async () => {
      sandbox.session.set('/hot.log', Buffer.from('line 1'));
      sandbox.session.set('/calm.txt', Buffer.from('c'));
      sandbox.changing.add('/hot.log');
      const first = await sut.pull(scope, sandbox, state, report({ changed: ['/hot.log', '/calm.txt'] }));
      expect(first.changed).toEqual(['/calm.txt']);
      expect(first.skipped).toEqual([{ path: '/hot.log', reason: 'changing' }]);
      expect(await files.vfs.exists(scope, '/hot.log')).toBe(false);

      sandbox.changing.clear();
      sandbox.session.set('/hot.log', Buffer.from('line 1\nline 2'));
      const next = await sut.pull(scope, sandbox, state, report());
      expect(next.changed).toEqual(['/hot.log']);
      expect(await files.vfs.read(scope, '/hot.log')).toContain('line 2');
    });

    it('should skip files that do not fit the tenant quota and keep the run going', async () => {
      setup({ VFS_MAX_TENANT_BYTES: '5' });
      sandbox.session.set('/a.txt', Buffer.from('1234'));
      sandbox.session.set('/b.txt', Buffer.from('5678'));
      const result = await sut.pull(scope, sandbox, state, report({ changed: ['/a.txt', '/b.txt'] }));
      expect(result.changed).toEqual(['/a.txt']);
      expect(result.skipped).toEqual([{ path: '/b.txt', reason: 'quota' }]);
    });

    // Issue 57: a run can make up to 100,000 files; the thread keeps at most its limit.
    it('should mirror new files up to the thread file limit, changes to existing ones always, and list the rest as too-many-files', async () => {
      setup({ VFS_MAX_FILES_PER_THREAD: '3' });
      await files.vfs.writeMany(scope, [
        { path: '/a.txt', content: 'a' },
        { path: '/b.txt', content: 'b' },
      ]);
      await sut.push(scope, sandbox, state);
      const made = ['/n1.txt', '/n2.txt', '/n3.txt', '/n4.txt'];
      for (const path of [...made, '/a.txt']) sandbox.session.set(path, Buffer.from(`new ${path}`));
      const writes = jest.spyOn(files.vfs, 'writeMany');
      const result = await sut.pull(scope, sandbox, state, report({ changed: [...made, '/a.txt'] }));
      expect(result.changed).toEqual(['/a.txt', '/n1.txt']);
      expect(result.skipped).toEqual([
        { path: '/n2.txt', reason: 'too-many-files' },
        { path: '/n3.txt', reason: 'too-many-files' },
        { path: '/n4.txt', reason: 'too-many-files' },
      ]);
      // One transaction, not one per refused file.
      expect(writes).toHaveBeenCalledTimes(1);
      expect(await files.vfs.read(scope, '/a.txt')).toContain('new /a.txt');
      expect((await files.vfs.glob(scope, '**')).length).toBe(3);
      // Nothing left pending: the next run does not try them again.
      expect((await sut.pull(scope, sandbox, state, report())).skipped).toEqual([]);
    });
  });
});
