import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startPlatform, type Platform } from './support/platform.js';

// Thread files pushed into a sandbox while code in it races the push (CVE-2018-15664's
// class): a process swaps a folder of /session and a symlink to /var/tmp with
// renameat2(RENAME_EXCHANGE), over and over, while the tenant writes files into that
// folder through the API and runs code, which pushes them in. Whatever the timing, no
// file may land outside /session: not in the container's root filesystem (read-only to
// the code, but not to the Docker engine, which the archive API used to write through),
// not through the link. Runs for a minute: long enough to have lost the race many
// times with the archive API (the first escaped file came within seconds).
const RACE_MS = 60_000;
const FILES_PER_ROUND = 4;

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
      for (let i = 0; i < FILES_PER_ROUND; i++) {
        const path = encodeURIComponent(`/spot/pushed-${rounds}-${i}.txt`);
        const put = await api.request('PUT', `/v1/threads/race/files/content?path=${path}`, { body: `round ${rounds}` });
        count(`put ${put.status}`);
      }
      // The push happens before the code runs.
      const ran = await api.execute(session.id, 'pass');
      count(`execute ${ran.status} ${ran.body.status}`);
      rounds++;
    }
    // Every request was answered as usual: the tenant only hurt its own files.
    expect([...statuses.keys()].filter((k) => !/^put 20[01]$/.test(k) && k !== 'execute 200 ok')).toEqual([]);

    const after = await api.execute(
      session.id,
      [
        'import json, os, time',
        'open("/tmp/stop", "w").close()',
        'swapper.wait(timeout=10)',
        'found = []',
        'for top in ("/var/tmp", "/tmp", "/opt", "/etc", "/usr/local", "/run"):',
        '    for folder, _dirs, files in os.walk(top):',
        '        found += [os.path.join(folder, f) for f in files if f.startswith("pushed-")]',
        'inside = [f for d in ("/session/spot", "/session/spot-link") if os.path.isdir(d) and not os.path.islink(d) for f in os.listdir(d)]',
        'print(json.dumps({"swaps": int(open("/tmp/swaps").read()), "outside": found, "vartmp": os.listdir("/var/tmp"), "inside": len(inside)}))',
      ].join('\n'),
    );
    expect(after.body.status).toBe('ok');
    const out = JSON.parse(after.body.stdout) as { swaps: number; outside: string[]; vartmp: string[]; inside: number };
    // The race ran the whole time and met many pushes.
    expect(rounds).toBeGreaterThan(100);
    expect(out.swaps).toBeGreaterThan(100_000);
    expect(out).toMatchObject({ outside: [], vartmp: [] });
    // Pushes that met the folder still put files there.
    expect(out.inside).toBeGreaterThan(0);
    // Nothing was added to the container's own filesystem (the engine's view, which is
    // where the archive API wrote).
    const info = await platform.containerOf(session.id);
    const changes = ((await platform.docker.getContainer(info.Id).changes()) ?? []) as { Path: string; Kind: number }[];
    expect(changes.filter((c) => c.Path.startsWith('/var/tmp') || c.Path.includes('pushed-'))).toEqual([]);
  }, RACE_MS + 120_000);
});
