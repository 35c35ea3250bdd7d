import type { Readable } from 'node:stream';
import tar from 'tar-stream';
import type { SessionFileRead } from '@drydock/execution';
import { readSessionArchive, sessionPathOfEntry } from './session-archive.js';

type Entry = { name: string; type?: tar.Header['type']; body?: string; linkname?: string; size?: number };

// An archive as the daemon would send it for `GET /containers/:id/archive`.
function archiveOf(entries: Entry[]): Readable {
  const pack = tar.pack();
  for (const e of entries) {
    const header: Partial<tar.Header> & { name: string } = { name: e.name, type: e.type ?? 'file', ...(e.linkname ? { linkname: e.linkname } : {}) };
    if (e.body !== undefined) pack.entry(header, e.body);
    else pack.entry({ ...header, size: 0 });
  }
  pack.finalize();
  return pack as unknown as Readable;
}

async function collect(reads: AsyncIterable<SessionFileRead>) {
  const out: Record<string, string> = {};
  for await (const read of reads) out[read.path] = 'skipped' in read ? `skipped:${read.skipped}` : read.content.toString();
  return out;
}

describe('session archives', () => {
  describe(sessionPathOfEntry.name, () => {
    it('should map names relative to the requested path and refuse escapes', () => {
      expect(sessionPathOfEntry('/session/out/a.csv', 'a.csv')).toBe('/out/a.csv');
      expect(sessionPathOfEntry('/session', 'session/out/a.csv')).toBe('/out/a.csv');
      expect(sessionPathOfEntry('/session', 'session/')).toBeNull();
      expect(sessionPathOfEntry('/session', 'session/../etc/passwd')).toBeNull();
      expect(sessionPathOfEntry('/session', '/etc/passwd')).toBeNull();
      expect(sessionPathOfEntry('/session', 'etc/passwd')).toBeNull();
    });
  });

  describe(readSessionArchive.name, () => {
    it('should read only regular files and name everything else with its kind', async () => {
      const archive = archiveOf([
        { name: 'session/', type: 'directory' },
        { name: 'session/ok.txt', body: 'fine' },
        { name: 'session/pw', type: 'symlink', linkname: '/etc/passwd' },
        { name: 'session/twin', type: 'link', linkname: 'session/ok.txt' },
        { name: 'session/pipe', type: 'fifo' },
        { name: 'session/tty', type: 'character-device' },
        { name: 'session/dir', type: 'directory' },
        { name: 'session/unasked.txt', body: 'not wanted' },
      ]);
      const wanted = new Set(['/ok.txt', '/pw', '/twin', '/pipe', '/tty', '/dir', '/missing.txt']);
      expect(await collect(readSessionArchive(archive, '/session', wanted, 1024))).toEqual({
        '/ok.txt': 'fine',
        '/pw': 'skipped:symlink',
        '/twin': 'skipped:hardlink',
        '/pipe': 'skipped:fifo',
        '/tty': 'skipped:device',
        '/dir': 'skipped:directory',
        '/missing.txt': 'skipped:vanished',
      });
    });

    it('should skip a file over the limit from its header and go on with the next', async () => {
      const archive = archiveOf([
        { name: 'session/big.bin', body: 'x'.repeat(2000) },
        { name: 'session/small.txt', body: 'ok' },
      ]);
      const reads = readSessionArchive(archive, '/session', new Set(['/big.bin', '/small.txt']), 1000);
      expect(await collect(reads)).toEqual({ '/big.bin': 'skipped:too-large', '/small.txt': 'ok' });
    });

    it('should never take an entry whose name climbs out of the requested directory', async () => {
      const archive = archiveOf([{ name: 'session/../outside.txt', body: 'nope' }]);
      const reads = readSessionArchive(archive, '/session', new Set(['/outside.txt']), 1000);
      expect(await collect(reads)).toEqual({ '/outside.txt': 'skipped:vanished' });
    });
  });
});
