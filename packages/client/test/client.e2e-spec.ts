import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build, stop as stopEsbuild } from 'esbuild';
import tar from 'tar-stream';
import WebSocket from 'ws';
import { Drydock, DrydockError, isDrydockError, TemplateBuildError } from '@drydock/client';
import { startPlatform, type Platform } from '../../../test/e2e/support/platform.js';

// @drydock/client against the real platform: every method, streaming callbacks that
// fire while the code still runs, typed errors, retries, and the bundled client in a
// browser.
describe('@drydock/client', () => {
  let platform: Platform;
  let client: Drydock;
  let apiKey: string;

  beforeAll(async () => {
    platform = await startPlatform();
    const admin = new Drydock({ url: platform.url, apiKey: process.env.DRYDOCK_ADMIN_KEY! });
    const tenant = await admin.tenants.create(`sdk-${randomBytes(3).toString('hex')}`);
    expect(tenant.apiKey).toMatch(/^ddk_/);
    expect((await admin.tenants.get(tenant.id)).name).toBe(tenant.name);
    expect((await admin.tenants.list()).map((t) => t.id)).toContain(tenant.id);
    apiKey = tenant.apiKey;
    client = new Drydock({ url: platform.url, apiKey });
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('should create a session, keep variables between runs and end it', async () => {
    const session = await client.sessions.create({ threadId: 'sdk-basics' });
    expect(session.threadId).toBe('sdk-basics');
    await session.run('x = 6 * 7');
    const run = await session.run('x');
    expect(run).toMatchObject({ status: 'ok', result: { text: '42' } });
    const failed = await session.run('1 / 0');
    expect(failed.status).toBe('error');
    expect(failed.error?.name).toBe('ZeroDivisionError');
    expect((await client.sessions.get(session.id)).id).toBe(session.id);
    expect((await client.sessions.list()).map((s) => s.id)).toContain(session.id);
    expect((await session.refresh()).status).toBe('ready');
    await session.delete();
    expect((await client.sessions.list({ includeEnded: true })).find((s) => s.id === session.id)?.info.status).toBe('ended');
  });

  it('should call onStdout while the code is still running', async () => {
    const session = await client.sessions.create({ threadId: 'sdk-stream' });
    const seen: { text: string; at: number }[] = [];
    const stderr: string[] = [];
    const started = Date.now();
    const run = await session.run('import sys, time\nprint("first", flush=True)\ntime.sleep(1.5)\nprint("oops", file=sys.stderr, flush=True)\nprint("last")', {
      onStdout: (text) => seen.push({ text, at: Date.now() }),
      onStderr: (text) => stderr.push(text),
    });
    const ended = Date.now();
    expect(run.status).toBe('ok');
    expect(seen.map((s) => s.text).join('')).toBe('first\nlast\n');
    // The first chunk came a whole sleep before the run ended.
    expect(ended - seen[0].at).toBeGreaterThan(1000);
    expect(seen[0].at - started).toBeLessThan(ended - started - 1000);
    expect(stderr.join('')).toBe('oops\n');
  });

  it('should interrupt a running cell and keep the session\'s variables', async () => {
    const session = await client.sessions.create({ threadId: 'sdk-interrupt' });
    await session.run('x = 42');
    const started = Date.now();
    let printed!: () => void;
    const running = new Promise<void>((resolve) => (printed = resolve));
    const run = session.run('print("looping", flush=True)\nwhile True: pass', { timeoutMs: 240_000, onStdout: () => printed() });
    await running;
    expect(await session.interrupt()).toHaveLength(1);
    const stopped = await run;
    expect(stopped).toMatchObject({ status: 'error', error: { name: 'KeyboardInterrupt' } });
    expect(Date.now() - started).toBeLessThan(30_000);
    expect((await session.run('x')).result?.text).toBe('42');
    expect(await session.interrupt()).toEqual([]);
  });

  it('should run once per idempotency key', async () => {
    const session = await client.sessions.create({ threadId: 'sdk-idem' });
    const first = await session.run('import random\nrandom.random()', { idempotencyKey: 'k-1' });
    const again = await session.run('import random\nrandom.random()', { idempotencyKey: 'k-1' });
    expect(again.id).toBe(first.id);
    expect(again.result).toEqual(first.result);
  });

  describe('commands', () => {
    it('should run a shell line and a program with its arguments, beside the REPL', async () => {
      const session = await client.sessions.create({ threadId: 'sdk-commands' });
      await session.run('kept = 7');
      const line = await session.commands.run('echo one two | wc -w; echo made > /session/made.txt');
      expect(line).toMatchObject({ kind: 'command', status: 'ok', exitCode: 0, signal: null, stdout: '2\n', stderr: '', sessionId: session.id, threadId: 'sdk-commands' });
      expect(line.id).toMatch(/^exe_/);
      // argv is passed as it is: no shell splits "a b" or expands $HOME.
      const argv = await session.commands.run(['printf', '%s|', 'a b', '$HOME']);
      expect(argv).toMatchObject({ status: 'ok', stdout: 'a b|$HOME|' });
      // What the command wrote is the thread's; the REPL's variables are untouched.
      expect(await session.files.readText('/made.txt')).toBe('made\n');
      expect((await session.run('kept')).result?.text).toBe('7');
    });

    it('should answer a failed command with its exit code and stderr, and a signal by name', async () => {
      const session = await client.sessions.create({ threadId: 'sdk-commands' });
      const failed = await session.commands.run('echo out; echo err >&2; exit 3');
      expect(failed).toMatchObject({ status: 'error', exitCode: 3, signal: null, stdout: 'out\n', stderr: 'err\n' });
      const killed = await session.commands.run('kill -TERM $$');
      expect(killed).toMatchObject({ status: 'error', exitCode: null, signal: 'SIGTERM' });
      const slow = await session.commands.run(['sleep', '30'], { timeoutMs: 500 });
      expect(slow.status).toBe('timeout');
    });

    it('should give the command its cwd, env and stdin', async () => {
      const session = await client.sessions.create({ threadId: 'sdk-commands' });
      await session.commands.run('mkdir -p /session/work');
      const run = await session.commands.run('pwd; echo "$GREETING"; tr a-z A-Z', { cwd: '/session/work', env: { GREETING: 'hello there' }, stdin: 'from stdin\n' });
      expect(run.stdout).toBe('/session/work\nhello there\nFROM STDIN\n');
    });

    it('should call onStdout and onStderr while the command is still running', async () => {
      const session = await client.sessions.create({ threadId: 'sdk-commands' });
      const seen: { text: string; at: number }[] = [];
      const stderr: string[] = [];
      const run = await session.commands.run('echo first; sleep 1.5; echo oops >&2; echo last; exit 4', {
        onStdout: (text) => seen.push({ text, at: Date.now() }),
        onStderr: (text) => stderr.push(text),
      });
      const ended = Date.now();
      expect(run).toMatchObject({ kind: 'command', status: 'error', exitCode: 4, stdout: 'first\nlast\n', stderr: 'oops\n' });
      expect(seen.map((s) => s.text).join('')).toBe('first\nlast\n');
      // The first chunk came a whole sleep before the command ended.
      expect(ended - seen[0].at).toBeGreaterThan(1000);
      expect(stderr.join('')).toBe('oops\n');
    });

    it('should throw the platform\'s refusals as DrydockErrors, streamed or not, and run once per idempotency key', async () => {
      const session = await client.sessions.create({ threadId: 'sdk-commands' });
      await expect(session.commands.run('pwd', { cwd: '/etc' })).rejects.toMatchObject({ name: 'DrydockError', code: 'INVALID_CWD', status: 400 });
      await expect(session.commands.run('true', { env: { HOME: '/tmp' }, onStdout: () => undefined })).rejects.toMatchObject({ code: 'INVALID_ENV', status: 400 });
      await expect(session.commands.run([])).rejects.toMatchObject({ code: 'INVALID_COMMAND' });
      const first = await session.commands.run('echo $RANDOM$RANDOM', { idempotencyKey: 'cmd-k-1' });
      const again = await session.commands.run('echo $RANDOM$RANDOM', { idempotencyKey: 'cmd-k-1' });
      expect(again.id).toBe(first.id);
      expect(again.stdout).toBe(first.stdout);
      const ended = await client.sessions.create({ threadId: 'sdk-commands-ended' });
      await ended.delete();
      await expect(ended.commands.run('true')).rejects.toMatchObject({ code: 'SESSION_ENDED', status: 409 });
    });

    it('should start a background process and give a handle to follow, feed, list and signal it', async () => {
      const session = await client.sessions.create({ threadId: 'sdk-background' });
      const chunks: string[] = [];
      const reader = await session.commands.run('while read line; do echo "got $line"; done; echo closed', {
        background: true,
        onStdout: (text) => chunks.push(text),
      });
      expect(reader.pid).toBeGreaterThan(1);
      await reader.sendStdin('one\n');
      await reader.sendStdin(new TextEncoder().encode('two\n'), { eof: true });
      await expect(reader.wait()).resolves.toEqual({ exitCode: 0, signal: null });
      expect(chunks.join('')).toBe('got one\ngot two\nclosed\n');
      expect(await reader.info()).toMatchObject({ id: reader.id, status: 'exited', exitCode: 0 });

      const server = await session.commands.run(['sleep', '300'], { background: true });
      expect((await session.commands.list()).map((p) => [p.id, p.status])).toEqual([
        [server.id, 'running'],
        [reader.id, 'exited'],
      ]);
      expect(await server.kill('SIGTERM')).toBe(true);
      await expect(session.commands.process(server.id).wait()).resolves.toEqual({ exitCode: null, signal: 'SIGTERM' });
      await expect(server.sendStdin('late')).rejects.toMatchObject({ code: 'PROCESS_NOT_RUNNING', status: 409 });
    });
  });

  describe('terminals', () => {
    it('should type into a terminal, resize it and resolve its exit code', async () => {
      const session = await client.sessions.create();
      let shown = '';
      const decoder = new TextDecoder();
      const terminal = await session.pty({ cols: 90, rows: 20, WebSocket: WebSocket as never, onData: (bytes) => (shown += decoder.decode(bytes)) });
      const until = async (needle: string) => {
        for (let i = 0; i < 300 && !shown.includes(needle); i++) await new Promise((resolve) => setTimeout(resolve, 50));
        expect(shown).toContain(needle);
      };
      terminal.write('stty size; echo sdk-$((6*7))\r');
      await until('sdk-42');
      expect(shown).toContain('20 90');
      terminal.resize(120, 33);
      terminal.write(new TextEncoder().encode('stty size\r'));
      await until('33 120');
      terminal.write('exit 5\r');
      await expect(terminal.exited).resolves.toEqual({ exitCode: 5, signal: null });
      // close() is a hang-up, and what exited says.
      const second = await session.pty({ WebSocket: WebSocket as never });
      second.close();
      await expect(second.exited).resolves.toMatchObject({ exitCode: null, signal: 'SIGHUP' });
      await session.delete();
      await expect(session.pty({ WebSocket: WebSocket as never })).rejects.toMatchObject({ code: 'SESSION_ENDED', status: 409 });
    });

    it('should say what to pass when the runtime has no WebSocket', async () => {
      const session = await client.sessions.create();
      const global = globalThis as { WebSocket?: unknown };
      const saved = global.WebSocket;
      delete global.WebSocket;
      try {
        await expect(session.pty()).rejects.toMatchObject({ code: 'WEBSOCKET_UNAVAILABLE' });
      } finally {
        if (saved) global.WebSocket = saved;
      }
    });
  });

  it('should read and write thread files', async () => {
    const files = client.files('sdk-files');
    const info = await files.write('/notes/a.txt', 'alpha\nbeta\n');
    expect(info).toMatchObject({ path: '/notes/a.txt', size: 11 });
    await files.upload('/bin/data.bin', new Uint8Array([0, 1, 2, 255]));
    expect([...(await files.download('/bin/data.bin'))]).toEqual([0, 1, 2, 255]);
    expect(await files.readText('/notes/a.txt')).toBe('alpha\nbeta\n');
    expect(await files.read('/notes/a.txt', { limit: 1 })).toContain('alpha');
    expect((await files.ls('/')).map((e) => e.path).sort()).toEqual(['/bin', '/notes']);
    expect(await files.stat('/notes/a.txt')).toMatchObject({ type: 'file', size: 11 });
    expect(await files.edit('/notes/a.txt', 'beta', 'gamma')).toEqual({ path: '/notes/a.txt', occurrences: 1 });
    expect(await files.glob('**/*.txt')).toEqual(['/notes/a.txt']);
    expect(await files.grep('gam', { outputMode: 'content' })).toMatchObject({ matches: [{ path: '/notes/a.txt', line: 2, text: 'gamma' }] });
    // The session of the thread sees the same files.
    const session = await client.sessions.create({ threadId: 'sdk-files' });
    expect((await session.run('print(open("/session/notes/a.txt").read())')).stdout).toBe('alpha\ngamma\n\n');
    await session.run('open("/session/out.csv", "w").write("a,b\\n")');
    expect(await session.files.readText('/out.csv')).toBe('a,b\n');
    await files.delete('/notes');
    expect((await files.ls('/')).map((e) => e.path)).not.toContain('/notes');
  });

  it('should upload from a stream as it is read and download as a stream, file and archive alike', async () => {
    const files = client.files('sdk-streams');
    const chunk = (i: number) => new Uint8Array(64 * 1024).fill(i % 251);
    const digest = createHash('sha256');
    // 4 MiB made as fetch asks for it: the generator is read chunk by chunk, never whole.
    async function* generated() {
      for (let i = 0; i < 64; i++) {
        const bytes = chunk(i);
        digest.update(bytes);
        yield bytes;
      }
    }
    expect(await files.write('/big/gen.bin', generated())).toMatchObject({ path: '/big/gen.bin', size: 4 * 1024 * 1024 });
    const sha = digest.digest('hex');
    // A Node stream is an async iterable of Buffers: fs.createReadStream goes as it is.
    const local = join(mkdtempSync(join(tmpdir(), 'sdk-streams-')), 'local.bin');
    await pipeline(Readable.fromWeb((await files.downloadStream('/big/gen.bin')) as never), createWriteStream(local));
    expect(createHash('sha256').update(readFileSync(local)).digest('hex')).toBe(sha);
    expect(await files.upload('/big/copy.bin', createReadStream(local))).toMatchObject({ size: 4 * 1024 * 1024 });
    // The download arrives in pieces as it is read, not as one buffer.
    const stream = await files.downloadStream('/big/copy.bin');
    const pieces: number[] = [];
    const copyDigest = createHash('sha256');
    for await (const piece of stream as unknown as AsyncIterable<Uint8Array>) {
      pieces.push(piece.byteLength);
      copyDigest.update(piece);
    }
    expect(pieces.length).toBeGreaterThan(1);
    expect(copyDigest.digest('hex')).toBe(sha);
    // A WHATWG stream, and a tar archive streamed as tar-stream packs it.
    expect(await files.write('/big/web.txt', new Blob(['web ', 'stream']).stream())).toMatchObject({ size: 10 });
    const pack = tar.pack();
    pack.entry({ name: 'x.txt' }, 'from a streamed archive');
    pack.finalize();
    expect(await files.uploadArchive(pack as unknown as AsyncIterable<Uint8Array>, { path: '/packed' })).toMatchObject({ written: 1 });
    expect(await files.readText('/packed/x.txt')).toBe('from a streamed archive');
    await expect(files.downloadStream('/missing.bin')).rejects.toMatchObject({ code: 'FILE_NOT_FOUND', status: 404 });
    // A streamed body cannot be read twice: a 503 on it is thrown, never resent.
    let calls = 0;
    const flaky = new Drydock({
      url: platform.url,
      apiKey,
      fetch: async () => (calls++, new Response(JSON.stringify({ error: { code: 'SERVICE_UNAVAILABLE', message: 'down' } }), { status: 503, headers: { 'retry-after': '0' } })),
    });
    await expect(flaky.files('sdk-streams').write('/never.bin', generated())).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(calls).toBe(1);
    await expect(flaky.files('sdk-streams').write('/retried.txt', 'bytes in memory')).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(calls).toBe(4);
  });

  it('should write many files from one tar archive, or none of them', async () => {
    const tarOf = async (entries: { name: string; body?: string; type?: 'symlink'; linkname?: string }[]) => {
      const pack = tar.pack();
      for (const e of entries) pack.entry({ name: e.name, type: e.type ?? 'file', linkname: e.linkname }, e.body ?? '');
      pack.finalize();
      const chunks: Buffer[] = [];
      for await (const chunk of pack as AsyncIterable<Buffer>) chunks.push(chunk);
      return new Uint8Array(Buffer.concat(chunks));
    };
    const files = client.files('sdk-archive');
    const written = await files.uploadArchive(await tarOf([{ name: 'a.txt', body: 'alpha' }, { name: 'sub/b.txt', body: 'beta' }]), { path: '/in' });
    expect(written).toMatchObject({ path: '/in', written: 2, created: 2, bytes: 9 });
    expect(await files.readText('/in/sub/b.txt')).toBe('beta');
    const gz = await files.uploadArchive(gzipSync(await tarOf([{ name: 'c.txt', body: 'gamma' }])), { gzip: true });
    expect(gz).toMatchObject({ path: '/', written: 1 });
    const refused = files.uploadArchive(await tarOf([{ name: 'd.txt', body: 'd' }, { name: 'l', type: 'symlink', linkname: '/etc' }]));
    await expect(refused).rejects.toMatchObject({ code: 'UNSUPPORTED_ARCHIVE_ENTRY', status: 400 });
    expect(await files.glob('**')).toEqual(['/c.txt', '/in/a.txt', '/in/sub/b.txt']);
  });

  it('should throw typed errors with the stable code', async () => {
    const error = await client.files('sdk-errors').readText('/missing.txt').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DrydockError);
    expect(error).toMatchObject({ code: 'FILE_NOT_FOUND', status: 404 });
    expect((error as DrydockError).requestId).toBeTruthy();
    expect(isDrydockError(error, 'FILE_NOT_FOUND')).toBe(true);
    await expect(client.sessions.get('ses_nope')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND', status: 404 });
    await expect(new Drydock({ url: platform.url, apiKey: 'ddk_wrong' }).sessions.list()).rejects.toMatchObject({ code: 'INVALID_API_KEY', status: 401 });
    await expect(client.sessions.create({ limits: { memoryMb: 1 } })).rejects.toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
    expect(() => new Drydock({ url: '', apiKey })).toThrow(/url/);
  });

  it('should retry idempotent calls through 503s, and send other calls once', async () => {
    let calls = 0;
    const flaky: typeof fetch = async (input, init) => {
      calls++;
      if (calls <= 2) return new Response(JSON.stringify({ error: { code: 'SERVICE_UNAVAILABLE', message: 'down' } }), { status: 503, headers: { 'retry-after': '0' } });
      return fetch(input, init);
    };
    const retrying = new Drydock({ url: platform.url, apiKey, fetch: flaky });
    expect(Array.isArray(await retrying.sessions.list())).toBe(true);
    expect(calls).toBe(3);
    calls = 0;
    await expect(retrying.sessions.create({ threadId: 'sdk-retry' })).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
    expect(calls).toBe(1);
  });

  it('should list, download, sign and delete artifacts', async () => {
    const session = await client.sessions.create({ threadId: 'sdk-artifacts' });
    const run = await session.run('open("/session/artifacts/report.txt", "w").write("hello artifact")');
    expect(run.artifacts).toHaveLength(1);
    const [artifact] = await client.artifacts.list({ threadId: 'sdk-artifacts' });
    expect(artifact).toMatchObject({ name: 'report.txt', size: 14, threadId: 'sdk-artifacts' });
    expect(await client.artifacts.get(artifact.id)).toMatchObject({ id: artifact.id });
    expect(new TextDecoder().decode(await client.artifacts.download(artifact.id))).toBe('hello artifact');
    const streamed = await client.artifacts.downloadStream(artifact.id);
    expect(await new Response(streamed).text()).toBe('hello artifact');
    await expect(client.artifacts.downloadStream('art_missing')).rejects.toMatchObject({ code: 'ARTIFACT_NOT_FOUND', status: 404 });
    const signed = await client.artifacts.signedUrl(artifact.id, { ttlSeconds: 60 });
    const res = await fetch(signed.url);
    expect([res.status, await res.text()]).toEqual([200, 'hello artifact']);
    await client.artifacts.delete(artifact.id);
    await expect(client.artifacts.get(artifact.id)).rejects.toMatchObject({ code: 'ARTIFACT_NOT_FOUND' });
  });

  it('should submit a batch from an async iterable, report progress and stream its results', async () => {
    async function* items() {
      for (let i = 0; i < 12; i++) yield { id: `item-${i}`, code: i === 5 ? 'raise ValueError("five")' : `print(${i} * ${i})` };
    }
    const progress: number[] = [];
    const batch = await client.batches.submit(items(), { concurrency: 4, onProgress: (b) => progress.push(b.counts.ok + b.counts.error) });
    const done = await batch.refresh();
    expect(done).toMatchObject({ status: 'completed', total: 12, counts: { ok: 11, error: 1 } });
    expect(progress.at(-1)).toBe(12);
    const results = [];
    for await (const item of batch.results()) results.push(item);
    expect(results.map((r) => r.index)).toEqual([...Array(12).keys()]);
    expect(results[3]).toMatchObject({ id: 'item-3', status: 'ok', stdout: '9\n' });
    expect(results[5]).toMatchObject({ status: 'error', error: { name: 'ValueError' } });
    expect((await batch.items({ status: 'error' })).map((i) => i.index)).toEqual([5]);
    expect((await client.batches.list()).batches.map((b) => b.id)).toContain(batch.id);
    expect((await client.batches.get(batch.id)).info.total).toBe(12);

    const queued = await client.batches.submit([{ code: 'import time\ntime.sleep(30)' }, { code: 'print(1)' }], { concurrency: 1 });
    const cancelled = await queued.cancel({ kill: true });
    expect(['cancelling', 'cancelled']).toContain(cancelled.status);
    const final = await queued.wait();
    // wait() goes on through `cancelling` until the killed item has ended.
    expect(final).toMatchObject({ status: 'cancelled', counts: { running: 0 } });
    expect(final.counts.cancelled + final.counts.killed).toBe(2);
  });

  it('should page batches newest first with limit and before, and walk every page with all()', async () => {
    // A tenant of its own: the listing holds exactly these three.
    const admin = new Drydock({ url: platform.url, apiKey: process.env.DRYDOCK_ADMIN_KEY! });
    const own = new Drydock({ url: platform.url, apiKey: (await admin.tenants.create(`sdk-pages-${randomBytes(3).toString('hex')}`)).apiKey });
    const submitted: string[] = [];
    for (let i = 0; i < 3; i++) submitted.push((await own.batches.submit([{ code: `print(${i})` }])).id);
    const newestFirst = [...submitted].reverse();
    const first = await own.batches.list({ limit: 2 });
    expect(first.batches.map((b) => b.id)).toEqual(newestFirst.slice(0, 2));
    expect(first.next).toBe(newestFirst[1]);
    const second = await own.batches.list({ limit: 2, before: first.next! });
    expect(second).toMatchObject({ batches: [{ id: newestFirst[2] }], next: null });
    const all: string[] = [];
    for await (const batch of own.batches.all({ pageSize: 1 })) all.push(batch.id);
    expect(all).toEqual(newestFirst);
    // Breaking out of the loop asks for no further page.
    let requests = 0;
    const watched = new Drydock({
      url: platform.url,
      apiKey: (await admin.tenants.create(`sdk-pages-b-${randomBytes(3).toString('hex')}`)).apiKey,
      fetch: (input, init) => (requests++, fetch(input, init)),
    });
    await watched.batches.submit([{ code: 'print(1)' }]);
    await watched.batches.submit([{ code: 'print(2)' }]);
    requests = 0;
    for await (const batch of watched.batches.all({ pageSize: 1 })) {
      expect(batch.id).toMatch(/^bat_/);
      break;
    }
    expect(requests).toBe(1);
    await expect(own.batches.list({ limit: 0 })).rejects.toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
    await expect(own.batches.list({ before: 'not-a-batch' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
  });

  it('should merge a tenant update into its limits, leaving the others as they were', async () => {
    const admin = new Drydock({ url: platform.url, apiKey: process.env.DRYDOCK_ADMIN_KEY! });
    const tenant = await admin.tenants.create(`sdk-limits-${randomBytes(3).toString('hex')}`, { memoryMb: 1024, network: { allow: ['pypi.org'] } });
    expect((await admin.tenants.update(tenant.id, { maxSessions: 3 })).limits).toEqual({ memoryMb: 1024, maxSessions: 3, network: { allow: ['pypi.org'] } });
    expect((await admin.tenants.get(tenant.id)).limits).toEqual({ memoryMb: 1024, maxSessions: 3, network: { allow: ['pypi.org'] } });
  });

  it('should create, export and import agents', async () => {
    const agent = await client.agents.create({ name: 'sdk-agent', instructions: 'Be brief.' });
    expect(agent.name).toBe('sdk-agent');
    expect((await client.agents.update(agent.id, { instructions: 'Be briefer.' })).instructions).toBe('Be briefer.');
    expect((await client.agents.list()).map((a) => a.id)).toContain(agent.id);
    const bundle = await client.agents.export(agent.id);
    await client.agents.delete(agent.id);
    await expect(client.agents.get(agent.id)).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });
    const imported = await client.agents.import(bundle);
    expect(imported).toMatchObject({ name: 'sdk-agent', instructions: 'Be briefer.' });
  });

  describe('templates', () => {
    const dockerfile = 'FROM drydock\nRUN echo hi > /etc/hi\n';

    it('should build a template with its log streamed, wait until it is ready and start a session from it', async () => {
      const build = await client.templates.build({ name: 'sdk-hi', dockerfile, description: 'says hi' });
      expect([build.name, build.ref]).toEqual(['sdk-hi', `sdk-hi:${build.version}`]);
      const lines: string[] = [];
      for await (const line of build.logs()) lines.push(line);
      expect(lines).toContainEqual(expect.stringMatching(/^Step 2\/2 : RUN echo hi > \/etc\/hi$/));
      expect(lines).toContain('drydock: self-test passed');
      // The log was read to its end: wait() needs only the version's record.
      const version = await build.wait();
      expect(version).toMatchObject({ version: build.version, status: 'ready', imageDigest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/), error: null });
      // A handle on the same version follows the log again, from its first line.
      const again: string[] = [];
      await expect(client.templates.buildOf('sdk-hi', build.version).wait({ onLog: (line) => again.push(line) })).resolves.toEqual(version);
      expect(again).toEqual(lines);

      const session = await client.sessions.create({ threadId: 'sdk-template', template: 'sdk-hi' });
      expect(session.info.template).toBe(build.ref);
      expect(await session.commands.run('cat /etc/hi')).toMatchObject({ status: 'ok', stdout: 'hi\n' });
      await session.delete();

      expect(await client.templates.list()).toContainEqual({ name: 'sdk-hi', shared: false, description: 'says hi', poolSize: 0, latest: { version: build.version, status: 'ready' } });
      expect(await client.templates.get('sdk-hi')).toMatchObject({ name: 'sdk-hi', shared: false, versions: [version] });
      await client.templates.delete('sdk-hi');
      await expect(client.templates.get('sdk-hi')).rejects.toMatchObject({ code: 'TEMPLATE_NOT_FOUND', status: 404 });
      await expect(client.sessions.create({ template: 'sdk-hi' })).rejects.toMatchObject({ code: 'TEMPLATE_NOT_FOUND', status: 404 });
      expect((await client.templates.list()).map((t) => t.name)).not.toContain('sdk-hi');
    }, 300_000);

    it('should throw a TemplateBuildError naming the failing step when the build fails', async () => {
      const build = await client.templates.build({ name: 'sdk-broken', dockerfile: 'FROM drydock\nRUN echo about to fail >&2 && exit 3\n' });
      const lines: string[] = [];
      const error = await build.wait({ onLog: (line) => lines.push(line) }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TemplateBuildError);
      expect(isDrydockError(error, 'TEMPLATE_BUILD_FAILED')).toBe(true);
      const failure = error as TemplateBuildError;
      expect(failure.message).toMatch(/^Template sdk-broken:\d+ failed to build: step 2\/2 \(RUN echo about to fail >&2 && exit 3\) failed: /);
      expect(failure).toMatchObject({ template: 'sdk-broken', version: build.version, details: { template: 'sdk-broken', version: build.version } });
      expect(failure.buildError).toMatch(/about to fail$/);
      expect(lines).toContain('about to fail');
      await expect(client.sessions.create({ template: 'sdk-broken' })).rejects.toMatchObject({ code: 'TEMPLATE_NOT_READY', status: 409 });
      await expect(client.templates.build({ name: 'sdk-bad', dockerfile: 'FROM python:3.12\n' })).rejects.toMatchObject({ code: 'INVALID_DOCKERFILE', status: 400 });
      await client.templates.delete('sdk-broken');
    }, 300_000);

    it('should build shared templates with the admin key, which tenants use but cannot delete', async () => {
      const admin = new Drydock({ url: platform.url, apiKey: process.env.DRYDOCK_ADMIN_KEY! });
      const name = `sdk-shared-${randomBytes(3).toString('hex')}`;
      const build = await admin.admin.templates.build({ name, dockerfile: 'FROM drydock\nRUN echo shared > /etc/shared\n' });
      const version = await build.wait();
      expect(version.status).toBe('ready');
      try {
        expect((await admin.admin.templates.list()).map((t) => t.name)).toContain(name);
        expect(await client.templates.list()).toContainEqual(expect.objectContaining({ name, shared: true, latest: { version: build.version, status: 'ready' } }));
        expect((await admin.admin.templates.setPoolSize(name, 1)).poolSize).toBe(1);
        expect((await admin.admin.templates.setPoolSize(name, 0)).poolSize).toBe(0);
        expect((await admin.admin.templates.get(name)).versions).toEqual([version]);
        const session = await client.sessions.create({ threadId: 'sdk-shared', template: `${name}:${build.version}` });
        expect(await session.commands.run('cat /etc/shared')).toMatchObject({ status: 'ok', stdout: 'shared\n' });
        await session.delete();
        await expect(client.templates.delete(name)).rejects.toMatchObject({ code: 'TEMPLATE_SHARED', status: 403 });
      } finally {
        await admin.admin.templates.delete(name);
      }
      await expect(admin.admin.templates.get(name)).rejects.toMatchObject({ code: 'TEMPLATE_NOT_FOUND' });
    }, 300_000);
  });

  // Network policies (docs/network.md) as the SDK sees them: nothing here needs the
  // sandbox to reach anything, so no connection is ever logged.
  describe('network', () => {
    let admin: Drydock;
    let tenantId: string;
    let net: Drydock;
    const ceiling = { allow: ['pypi.org', 'files.pythonhosted.org', '*.example.com'] };

    beforeAll(async () => {
      admin = new Drydock({ url: platform.url, apiKey: process.env.DRYDOCK_ADMIN_KEY! });
      const tenant = await admin.admin.tenants.create(`sdk-net-${randomBytes(3).toString('hex')}`);
      tenantId = tenant.id;
      net = new Drydock({ url: platform.url, apiKey: tenant.apiKey });
    });

    it('should refuse a policy while the tenant has no ceiling, then start a session within the one the admin sets and show its policy', async () => {
      const refused = await net.sessions.create({ threadId: 'sdk-net', network: { allow: ['pypi.org'] } }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(DrydockError);
      expect(refused).toMatchObject({ code: 'NETWORK_NOT_ALLOWED', status: 422, details: { entries: ['pypi.org'] } });

      const updated = await admin.admin.tenants.update(tenantId, { network: ceiling });
      expect(updated.limits.network).toEqual(ceiling);
      expect((await admin.tenants.get(tenantId)).limits.network).toEqual(ceiling);

      // Entries are stored normalized (lower case, no trailing dot).
      const session = await net.sessions.create({ threadId: 'sdk-net', network: { allow: ['PyPI.org', 'api.example.com.'] } });
      try {
        expect(session.info.network).toEqual({ allow: ['pypi.org', 'api.example.com'] });
        expect((await net.sessions.get(session.id)).info.network).toEqual({ allow: ['pypi.org', 'api.example.com'] });
        // A new session has logged nothing: one page, the last.
        expect(await session.network()).toEqual({ policy: { allow: ['pypi.org', 'api.example.com'] }, connections: [], next: null });
        expect(await session.network({ verdict: 'denied', limit: 5 })).toEqual({ policy: { allow: ['pypi.org', 'api.example.com'] }, connections: [], next: null });
        const all = [];
        for await (const connection of session.connections({ pageSize: 10 })) all.push(connection);
        expect(all).toEqual([]);
      } finally {
        await session.delete();
      }
    }, 120_000);

    it('should throw NETWORK_NOT_ALLOWED naming the entries outside the ceiling, and NETWORK_FORBIDDEN for true', async () => {
      await admin.admin.tenants.update(tenantId, { network: ceiling });
      const error = await net.sessions.create({ threadId: 'sdk-net-out', network: { allow: ['pypi.org', 'evil.test', 'api.example.com:8443'] } }).catch((e: unknown) => e);
      expect(isDrydockError(error, 'NETWORK_NOT_ALLOWED')).toBe(true);
      const refused = error as DrydockError;
      expect(refused.status).toBe(422);
      expect(refused.details?.entries).toEqual(['evil.test', 'api.example.com:8443']);
      expect(refused.message).toContain('evil.test');
      // Nothing was started for the thread.
      expect((await net.sessions.list()).map((s) => s.threadId)).not.toContain('sdk-net-out');
      await expect(net.sessions.create({ threadId: 'sdk-net-out', network: true as never })).rejects.toMatchObject({ code: 'NETWORK_FORBIDDEN', status: 403 });
      await expect(net.sessions.create({ threadId: 'sdk-net-out', network: { allow: ['not a host'] } })).rejects.toMatchObject({ code: 'INVALID_NETWORK_POLICY', status: 400 });
    });

    it('should narrow a live session\'s policy and refuse to widen it', async () => {
      await admin.admin.tenants.update(tenantId, { network: ceiling });
      const session = await net.sessions.create({ threadId: 'sdk-net-narrow', network: { allow: ['pypi.org', 'files.pythonhosted.org'] } });
      try {
        const narrowed = await session.narrowNetwork(['pypi.org']);
        expect(narrowed.id).toBe(session.id);
        expect(narrowed.network).toEqual({ allow: ['pypi.org'] });
        expect(session.info.network).toEqual({ allow: ['pypi.org'] });
        expect((await session.network()).policy).toEqual({ allow: ['pypi.org'] });

        // files.pythonhosted.org is within the tenant's ceiling, but no longer the session's.
        const widened = await session.narrowNetwork(['pypi.org', 'files.pythonhosted.org']).catch((e: unknown) => e);
        expect(widened).toBeInstanceOf(DrydockError);
        expect(widened).toMatchObject({ code: 'NETWORK_NOT_ALLOWED', status: 422, details: { entries: ['files.pythonhosted.org'] } });
        expect((await session.refresh()).network).toEqual({ allow: ['pypi.org'] });

        // Narrowed to nothing: the session keeps a policy that allows no host.
        expect((await session.narrowNetwork([])).network).toEqual({ allow: [] });
      } finally {
        await session.delete();
      }
      await expect(session.narrowNetwork([])).rejects.toMatchObject({ code: 'SESSION_ENDED' });
    }, 120_000);

    it('should answer no policy for a session without network, which cannot be given one', async () => {
      const session = await net.sessions.create({ threadId: 'sdk-net-none' });
      try {
        expect(session.info.network).toBeNull();
        expect(await session.network()).toEqual({ policy: null, connections: [], next: null });
        await expect(session.narrowNetwork(['pypi.org'])).rejects.toMatchObject({ code: 'NETWORK_NOT_ALLOWED', details: { entries: ['pypi.org'] } });
      } finally {
        await session.delete();
      }
    }, 120_000);

    // A refused attempt reaches nothing: the worker's proxy answers 403 itself, and logs it.
    it('should log the attempts the policy refuses, read page by page from the session and by operators', async () => {
      await admin.admin.tenants.update(tenantId, { network: ceiling });
      const session = await net.sessions.create({ threadId: 'sdk-net-denied', network: { allow: ['pypi.org'] } });
      try {
        const code = [
          'import urllib.request, urllib.error',
          'for host in ["denied.example.com", "other.example.com"]:',
          '    try: urllib.request.urlopen(f"http://{host}/", timeout=20)',
          '    except urllib.error.HTTPError as e: print(e.code)',
        ].join('\n');
        expect(await session.run(code)).toMatchObject({ status: 'ok', stdout: '403\n403\n' });
        // The log is written in batches (at most ~250 ms late).
        const deadline = Date.now() + 15_000;
        let page = await session.network();
        while (page.connections.length < 2 && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 200));
          page = await session.network();
        }
        expect(page.policy).toEqual({ allow: ['pypi.org'] });
        expect(page.next).toBeNull();
        // Newest first.
        expect(page.connections.map((c) => c.host)).toEqual(['other.example.com', 'denied.example.com']);
        expect(page.connections[0]).toMatchObject({ port: 80, verdict: 'denied', rule: null, sessionId: session.id, reason: expect.stringContaining('pypi.org') });

        // One a page: `next` leads to the older one, then to an empty last page.
        const first = await session.network({ limit: 1 });
        expect(first.connections.map((c) => c.host)).toEqual(['other.example.com']);
        expect(first.next).toEqual(expect.any(String));
        const second = await session.network({ limit: 1, before: first.next! });
        expect(second.connections.map((c) => c.host)).toEqual(['denied.example.com']);
        const walked = [];
        for await (const connection of session.connections({ pageSize: 1 })) walked.push(connection.id);
        expect(walked).toEqual(page.connections.map((c) => c.id));
        expect((await session.network({ verdict: 'allowed' })).connections).toEqual([]);

        const operators = await admin.admin.egress.list({ sessionId: session.id, verdict: 'denied' });
        expect(operators.connections.map((c) => c.id)).toEqual(page.connections.map((c) => c.id));
        expect(operators.connections[0]).toMatchObject({ tenantId, workerId: session.info.workerId, host: 'other.example.com' });
        const all = [];
        for await (const connection of admin.admin.egress.all({ tenantId, pageSize: 1 })) all.push(connection.host);
        expect(all).toEqual(['other.example.com', 'denied.example.com']);
      } finally {
        await session.delete();
      }
    }, 120_000);

    it("should answer an empty egress log for a tenant that made no connection, and refuse a bad range", async () => {
      const quiet = (await admin.admin.tenants.create(`sdk-net-quiet-${randomBytes(3).toString('hex')}`)).id;
      expect(await admin.admin.egress.list({ tenantId: quiet })).toEqual({ connections: [], next: null });
      expect(await admin.admin.egress.list({ tenantId: quiet, verdict: 'denied', from: '2020-01-01', to: new Date().toISOString(), limit: 10 })).toEqual({ connections: [], next: null });
      const all = [];
      for await (const connection of admin.admin.egress.all({ tenantId: quiet, pageSize: 50 })) all.push(connection);
      expect(all).toEqual([]);
      await expect(admin.admin.egress.list({ from: '2026-02-01', to: '2026-01-01' })).rejects.toMatchObject({ code: 'INVALID_RANGE', status: 400 });
      // A tenant key is not an operator's.
      await expect(net.admin.egress.list()).rejects.toMatchObject({ status: 401 });
    });
  });

  // The bundled client in headless Chromium: esbuild bundles it for the browser platform
  // (a Node import would fail the build), a page runs a session with it and reports back.
  // The page is served from the same origin as a proxy to the gateway.
  it('should run a session from the bundled client in headless Chromium', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drydock-browser-'));
    try {
      await build({ entryPoints: ['packages/client/src/index.ts'], bundle: true, format: 'esm', platform: 'browser', target: 'es2022', outfile: join(dir, 'drydock.js'), logLevel: 'silent' });
      await stopEsbuild();
      const bundle = readFileSync(join(dir, 'drydock.js'), 'utf8');
      expect(bundle).not.toMatch(/from ["']node:/);
      const page = `<!doctype html><meta charset="utf-8"><script type="module">
        import { Drydock } from './drydock.js';
        const report = (body) => fetch('/report', { method: 'POST', body: JSON.stringify(body) });
        try {
          const client = new Drydock({ url: location.origin, apiKey: ${JSON.stringify(apiKey)} });
          const session = await client.sessions.create({ threadId: 'sdk-browser' });
          const chunks = [];
          const run = await session.run('print("from the browser")\\n21 * 2', { onStdout: (t) => chunks.push(t) });
          await session.files.write('/hello.txt', 'hi');
          const missing = await session.files.readText('/nope').catch((e) => e.code);
          report({ status: run.status, result: run.result.text, streamed: chunks.join(''), files: (await session.files.ls('/')).map((e) => e.path), missing, node: typeof process !== 'undefined' });
        } catch (e) { report({ failure: String(e && e.stack || e) }); }
      </script>`;
      let resolveReport: (value: Record<string, unknown>) => void;
      const reported = new Promise<Record<string, unknown>>((resolve) => (resolveReport = resolve));
      const gateway = new URL(platform.url);
      const server: Server = createServer((req, res) => {
        if (req.url === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(page);
        if (req.url === '/drydock.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
        if (req.url === '/report') {
          let body = '';
          req.on('data', (c) => (body += c)).on('end', () => {
            res.end();
            resolveReport(JSON.parse(body));
          });
          return;
        }
        const upstream = httpRequest({ host: gateway.hostname, port: gateway.port, path: req.url, method: req.method, headers: req.headers, agent: false }, (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        });
        req.pipe(upstream);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as { port: number };
      const browser = spawn('chromium', ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', `--user-data-dir=${dir}/profile`, `http://127.0.0.1:${port}/`], { stdio: 'ignore', detached: true });
      const exited = new Promise((resolve) => browser.once('exit', resolve));
      try {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('the page never reported')), 60_000)));
        const result = await Promise.race([reported, timeout]).finally(() => clearTimeout(timer));
        expect(result).toEqual({ status: 'ok', result: '42', streamed: 'from the browser\n', files: ['/hello.txt'], missing: 'FILE_NOT_FOUND', node: false });
      } finally {
        // Chromium's helpers are in its process group: end them all before removing its profile.
        process.kill(-browser.pid!, 'SIGKILL');
        await exited;
        server.closeAllConnections();
        server.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
