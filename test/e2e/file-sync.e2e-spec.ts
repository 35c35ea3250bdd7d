import { createHash } from 'node:crypto';
import { startPlatform, type Platform } from './support/platform.js';
import type { ApiClient } from './support/api-client.js';

const files = (thread: string) => `/v1/threads/${thread}/files`;
const q = (path: string) => `?path=${encodeURIComponent(path)}`;
const MAX_FILE_BYTES = 1024 * 1024;

// The two-way mirror between a thread's files and its session's /session, end to end:
// the REST API on one side, Python in a real container on the other.
describe('Thread files in the session (sync)', () => {
  let platform: Platform;
  let api: ApiClient;

  beforeAll(async () => {
    platform = await startPlatform({ VFS_MAX_FILE_BYTES: String(MAX_FILE_BYTES) });
    api = await platform.newTenant();
  });

  afterAll(async () => {
    await platform?.close();
  });

  const put = (thread: string, path: string, body: string | Buffer) =>
    api.request('PUT', `${files(thread)}/content${q(path)}`, {
      body,
      headers: { 'content-type': 'application/octet-stream' },
    });
  const content = (thread: string, path: string) => api.get(`${files(thread)}/content${q(path)}`);
  const run = async (sessionId: string, code: string) => {
    const res = await api.execute(sessionId, code);
    expect(res.status).toBe(200);
    return res.body;
  };

  it('should let pandas read a file written through the API and give back the file it wrote', async () => {
    expect((await put('t-pandas', '/data/in.csv', 'city,sales\nOslo,3\nLima,5\nOslo,4\n')).status).toBe(201);
    const session = await api.createSession({ threadId: 't-pandas' });
    const result = await run(
      session.id,
      [
        'import os, pandas as pd',
        "df = pd.read_csv('/session/data/in.csv')",
        "os.makedirs('/session/out', exist_ok=True)",
        "df.groupby('city', as_index=False)['sales'].sum().to_csv('/session/out/summary.csv', index=False)",
      ].join('\n'),
    );
    expect(result).toMatchObject({ status: 'ok', files: { changed: ['/out/summary.csv'], deleted: [], skipped: [] } });
    const summary = await content('t-pandas', '/out/summary.csv');
    expect(summary.status).toBe(200);
    expect(summary.body).toBe('city,sales\nLima,5\nOslo,7\n');
  });

  it('should show a file written through the API to the very next execution, in a directory the code can write to', async () => {
    const session = await api.createSession({ threadId: 't-next' });
    expect((await run(session.id, '1')).status).toBe('ok');
    await put('t-next', '/inbox/msg.txt', 'hello');
    const result = await run(
      session.id,
      "open('/session/inbox/reply.txt', 'w').write(open('/session/inbox/msg.txt').read().upper())",
    );
    expect(result.status).toBe('ok');
    expect((await content('t-next', '/inbox/reply.txt')).body).toBe('HELLO');
  });

  it('should bring back binary files byte for byte', async () => {
    const session = await api.createSession({ threadId: 't-binary' });
    const result = await run(
      session.id,
      [
        'import hashlib, random',
        'data = random.Random(7).randbytes(300_000)',
        "open('/session/blob.bin', 'wb').write(data)",
        'hashlib.sha256(data).hexdigest()',
      ].join('\n'),
    );
    const res = await fetch(`${platform.url}${files('t-binary')}/content${q('/blob.bin')}`, {
      headers: { authorization: `Bearer ${(api as unknown as { key: string }).key}` },
    });
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes).toHaveLength(300_000);
    expect(`'${createHash('sha256').update(bytes).digest('hex')}'`).toBe(result.result.text);
  });

  it('should not bring /etc/passwd into the thread through a symlink', async () => {
    const session = await api.createSession({ threadId: 't-symlink' });
    const result = await run(
      session.id,
      [
        'import os',
        "os.symlink('/etc/passwd', '/session/passwd')",
        "os.symlink('/etc', '/session/etc')",
        "open('/session/real.txt', 'w').write('mine')",
      ].join('\n'),
    );
    expect(result.files.changed).toEqual(['/real.txt']);
    expect(result.files.skipped).toEqual([
      { path: '/etc', reason: 'symlink' },
      { path: '/passwd', reason: 'symlink' },
    ]);
    expect((await content('t-symlink', '/passwd')).status).toBe(404);
    const all = await api.post(`${files('t-symlink')}/glob`, { pattern: '**' });
    expect(all.body.paths).toEqual(['/real.txt']);
  });

  it('should not ingest hard links or FIFOs', async () => {
    const session = await api.createSession({ threadId: 't-links' });
    const result = await run(
      session.id,
      "import os\nopen('/session/a.txt', 'w').write('a')\nos.link('/session/a.txt', '/session/b.txt')\nos.mkfifo('/session/pipe')",
    );
    expect(result.files.changed).toEqual([]);
    expect(result.files.skipped.map((s: { path: string; reason: string }) => `${s.path}:${s.reason}`)).toEqual([
      '/a.txt:hardlink',
      '/b.txt:hardlink',
      '/pipe:fifo',
    ]);
    expect((await api.post(`${files('t-links')}/glob`, { pattern: '**' })).body.paths).toEqual([]);
  });

  it('should make a file deleted through the API disappear in the container before the next execution', async () => {
    await put('t-api-delete', '/gone.txt', 'soon gone');
    const session = await api.createSession({ threadId: 't-api-delete' });
    expect((await run(session.id, "import os\nos.path.exists('/session/gone.txt')")).result.text).toBe('True');
    expect((await api.delete(`${files('t-api-delete')}${q('/gone.txt')}`)).status).toBe(204);
    expect((await run(session.id, "os.path.exists('/session/gone.txt')")).result.text).toBe('False');
  });

  it('should remove from the thread a file the code deleted', async () => {
    await put('t-code-delete', '/old/report.txt', 'stale');
    const session = await api.createSession({ threadId: 't-code-delete' });
    const result = await run(session.id, "import os\nos.remove('/session/old/report.txt')");
    expect(result.files).toEqual({ changed: [], deleted: ['/old/report.txt'], skipped: [] });
    expect((await content('t-code-delete', '/old/report.txt')).status).toBe(404);
  });

  it('should skip a file over the size limit with a note and keep the run and the other files', async () => {
    const session = await api.createSession({ threadId: 't-big' });
    const result = await run(
      session.id,
      `open('/session/big.bin', 'wb').write(b'x' * ${MAX_FILE_BYTES + 1})\nopen('/session/small.txt', 'w').write('ok')`,
    );
    expect(result.status).toBe('ok');
    expect(result.files.changed).toEqual(['/small.txt']);
    expect(result.files.skipped).toEqual([{ path: '/big.bin', reason: 'too-large' }]);
    expect((await content('t-big', '/big.bin')).status).toBe(404);
  });

  it('should mirror the other files while code in the background is still writing one, and that one once it stops', async () => {
    const session = await api.createSession({ threadId: 't-hot' });
    // A thread that keeps appending to hot.log (starting over past 768 KiB) after each
    // run ends. A read of it usually sees it grow or shrink, not always: runs that also
    // write calm.txt go on until one finds hot.log changing under its read.
    const started = await run(
      session.id,
      [
        'import threading',
        'stop = threading.Event()',
        'def churn():',
        "    with open('/session/hot.log', 'ab', buffering=0) as f:",
        '        while not stop.is_set():',
        "            f.write(b'x' * 256)",
        '            if f.tell() > 768 * 1024: f.truncate(0); f.seek(0)',
        'writer = threading.Thread(target=churn, daemon=True)',
        'writer.start()',
      ].join('\n'),
    );
    expect(started.status).toBe('ok');
    let caught: { attempt: number; files: { changed: string[]; skipped: { path: string; reason: string }[] } } | undefined;
    for (let attempt = 1; attempt <= 30 && !caught; attempt++) {
      const result = await run(session.id, `open('/session/calm.txt', 'w').write('calm ${attempt}')`);
      expect(result.status).toBe('ok');
      if (result.files.skipped.length > 0) caught = { attempt, files: result.files };
    }
    expect(caught).toBeDefined();
    expect(caught!.files.changed).toEqual(['/calm.txt']);
    expect(caught!.files.skipped).toEqual([{ path: '/hot.log', reason: 'changing' }]);
    expect((await content('t-hot', '/calm.txt')).body).toBe(`calm ${caught!.attempt}`);

    const stopped = await run(session.id, "stop.set(); writer.join()\nopen('/session/hot.log', 'w').write('done')");
    expect(stopped.status).toBe('ok');
    expect(stopped.files.changed).toEqual(['/hot.log']);
    expect((await content('t-hot', '/hot.log')).body).toBe('done');
  });

  it('should read many changed files back at once and leave /session/artifacts out', async () => {
    const session = await api.createSession({ threadId: 't-many' });
    const result = await run(
      session.id,
      [
        'import os',
        "os.makedirs('/session/parts', exist_ok=True)",
        "os.makedirs('/session/artifacts', exist_ok=True)",
        "for i in range(40): open(f'/session/parts/{i:02}.txt', 'w').write(str(i))",
        "open('/session/artifacts/chart.txt', 'w').write('not a thread file')",
      ].join('\n'),
    );
    expect(result.files.changed).toHaveLength(40);
    expect((await content('t-many', '/parts/39.txt')).body).toBe('39');
    expect((await api.post(`${files('t-many')}/glob`, { pattern: 'artifacts/**' })).body.paths).toEqual([]);
  });

  it('should start a new session for the thread with the files the last one wrote', async () => {
    const first = await api.createSession({ threadId: 't-resume' });
    await run(first.id, "open('/session/state.json', 'w').write('{\"step\": 3}')");
    expect((await api.delete(`/v1/sessions/${first.id}`)).status).toBe(204);
    const second = await api.createSession({ threadId: 't-resume' });
    expect(second.id).not.toBe(first.id);
    const result = await run(second.id, "open('/session/state.json').read()");
    expect(result.result.text).toBe(`'{"step": 3}'`);
  });

  it('should keep each thread to its own files', async () => {
    await put('t-own-a', '/secret.txt', 'a only');
    const session = await api.createSession({ threadId: 't-own-b' });
    // Only the (empty) artifacts folder every session has.
    expect((await run(session.id, "import os\nos.listdir('/session'), os.listdir('/session/artifacts')")).result.text).toBe("(['artifacts'], [])");
  });
});
