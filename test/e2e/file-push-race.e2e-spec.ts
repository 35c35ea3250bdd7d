import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { tmpdir } from 'node:os';
import { tarOf } from '../support/tar-archive.js';
import { startPlatform, type Platform } from './support/platform.js';

// Thread files pushed into a sandbox while code in it races the push (CVE-2018-15664's
// class): a process swaps a folder of /session and a symlink to /var/tmp with
// renameat2(RENAME_EXCHANGE), over and over, while the tenant writes files into that
// folder through the API and runs code, which pushes them in. Whatever the timing, no
// file may land outside /session: not in the container's root filesystem (read-only to
// the code, but not to the Docker engine, which the archive API used to write through),
// not through the link; and a push that meets the link is refused for that path only,
// never failing the run. Runs for a minute, some thousands of files. With the archive
// API (dc799fd, Docker 20.10 here) the same minute killed runs with FileSyncError
// whenever a push met the link ("cannot overwrite non-directory"), and the engine
// follows a link it meets at a folder: `docker cp` of spot/x past /session/spot ->
// /var/tmp writes the container's /var/tmp/x (docker diff: A /var/tmp/x).
const RACE_MS = 60_000;
const FILES_PER_ROUND = 50;

const SWAPPER = [
  'import ctypes, os',
  'libc = ctypes.CDLL(None, use_errno=True)',
  'swaps = 0',
  'while True:',
  '    for _ in range(2000):',
  '        if libc.renameat2(-100, b"/session/spot", -100, b"/session/spot-link", 2) == 0:',
  '            swaps += 1',
  '    with open("/tmp/swaps", "w") as f:',
  '        f.write(str(swaps))',
  '    if os.path.exists("/tmp/stop"):',
  '        break',
].join('\n');

describe('File pushes raced by code in the sandbox', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startPlatform({ SANDBOX_CHANNEL_DIR: process.env.SANDBOX_CHANNEL_DIR || join(tmpdir(), 'drydock-test-channels') });
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('should never write a pushed file outside /session while a folder is swapped for a link', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession({ threadId: 'race' });
    const started = await api.execute(
      session.id,
      [
        'import os, subprocess, sys',
        'os.makedirs("/session/spot")',
        'os.symlink("/var/tmp", "/session/spot-link")',
        `swapper = subprocess.Popen([sys.executable, "-c", ${JSON.stringify(SWAPPER)}], start_new_session=True)`,
        'print(sorted(os.listdir("/var/tmp")))',
      ].join('\n'),
    );
    expect(started.body).toMatchObject({ status: 'ok', stdout: '[]\n' });

    const statuses = new Map<string, number>();
    const count = (what: string) => statuses.set(what, (statuses.get(what) ?? 0) + 1);
    let rounds = 0;
    const until = Date.now() + RACE_MS;
    while (Date.now() < until) {
      // One archive a round: each of its files is one more chance for the push to meet the link.
      const archive = await tarOf(Array.from({ length: FILES_PER_ROUND }, (_, i) => ({ name: `pushed-${rounds}-${i}.txt`, body: `round ${rounds}` })));
      const put = await api.request('POST', '/v1/threads/race/files/archive?path=/spot', { body: archive, headers: { 'content-type': 'application/x-tar' } });
      count(`put ${put.status}`);
      // The push happens before the code runs.
      const ran = await api.execute(session.id, 'pass');
      count(`execute ${ran.status} ${ran.body.status}`);
      rounds++;
    }

    // Looked at from outside the session's own path (a push would run before any code):
    // the swapper is stopped and the container's filesystem searched with `docker exec`.
    const info = await platform.containerOf(session.id);
    const container = platform.docker.getContainer(info.Id);
    const look = [
      'import json, os, time',
      'open("/tmp/stop", "w").close()',
      'time.sleep(1)',
      'found = []',
      'for top in ("/var/tmp", "/tmp", "/opt", "/etc", "/usr/local", "/run"):',
      '    for folder, _dirs, files in os.walk(top):',
      '        found += [os.path.join(folder, f) for f in files if f.startswith("pushed-")]',
      'inside = [f for d in ("/session/spot", "/session/spot-link") if os.path.isdir(d) and not os.path.islink(d) for f in os.listdir(d)]',
      'print(json.dumps({"swaps": int(open("/tmp/swaps").read()), "outside": found, "vartmp": os.listdir("/var/tmp"), "inside": len(inside)}))',
    ].join('\n');
    const exec = await container.exec({ Cmd: ['python3', '-c', look], User: '10001:10001', AttachStdout: true, AttachStderr: true });
    const stream = await exec.start({ hijack: true, stdin: false });
    const stdout = new PassThrough();
    const chunks: Buffer[] = [];
    stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    platform.docker.modem.demuxStream(stream, stdout, new PassThrough());
    await new Promise((resolve) => stream.on('end', resolve));
    const out = JSON.parse(Buffer.concat(chunks).toString()) as { swaps: number; outside: string[]; vartmp: string[]; inside: number };
    // The race ran the whole time (the swapper takes most of the sandbox's CPU, so a
    // round takes about a second here) and met many pushes.
    expect(rounds).toBeGreaterThan(20);
    expect(out.swaps).toBeGreaterThan(100_000);
    expect(out).toMatchObject({ outside: [], vartmp: [] });
    // Pushes that met the folder put their files there; those that met the link were
    // refused (and stay in the thread only).
    expect(out.inside).toBeGreaterThan(0);
    expect(out.inside).toBeLessThan(rounds * FILES_PER_ROUND);
    // Nothing was added to the container's own filesystem (the engine's view, which is
    // where the archive API wrote).
    const changes = ((await container.changes()) ?? []) as { Path: string; Kind: number }[];
    expect(changes.filter((c) => c.Path.startsWith('/var/tmp') || c.Path.includes('pushed-'))).toEqual([]);
    // Every request was answered as usual (a refused push is no failure of the run): the
    // tenant only hurt its own files.
    expect([...statuses.keys()].filter((k) => !/^put 20[01]$/.test(k) && k !== 'execute 200 ok')).toEqual([]);
    expect((await api.execute(session.id, 'swapper.wait(timeout=10)')).body).toMatchObject({ status: 'ok', result: { text: '0' } });
  }, RACE_MS + 120_000);
});
