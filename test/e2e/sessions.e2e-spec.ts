import { createHash } from 'node:crypto';
import { startPlatform, type Platform } from './support/platform.js';

describe('Sessions and executions', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startPlatform();
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('should keep variables and functions between executions of one session', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();

    const first = await api.execute(session.id, 'x = 41');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: 'ok', result: null, stateLost: false });

    const second = await api.execute(session.id, 'x + 1');
    expect(second.body.status).toBe('ok');
    expect(second.body.result.text).toBe('42');

    await api.execute(session.id, 'def double(n):\n    return n * 2');
    const call = await api.execute(session.id, 'double(x)');
    expect(call.body.result.text).toBe('82');
  });

  it('should report Python exceptions as status error with a traceback, not as an HTTP error', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    const res = await api.execute(session.id, 'print("before")\n1 / 0');
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('error');
    expect(res.body.stdout).toBe('before\n');
    expect(res.body.error).toMatchObject({ name: 'ZeroDivisionError', value: 'division by zero' });
    expect(res.body.error.traceback).toContain('1 / 0');
  });

  it('should capture stdout and stderr separately, including child processes', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    const res = await api.execute(
      session.id,
      'import sys, subprocess\nprint("out")\nprint("err", file=sys.stderr)\nsubprocess.run("echo child-out; echo child-err >&2", shell=True)',
    );
    expect(res.body.stdout).toBe('out\nchild-out\n');
    expect(res.body.stderr).toBe('err\nchild-err\n');
  });

  it('should record executions and return them by id', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    const run = await api.execute(session.id, '6 * 7');
    const fetched = await api.get(`/v1/executions/${run.body.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toMatchObject({ id: run.body.id, sessionId: session.id, status: 'ok' });
    expect(fetched.body.result.text).toBe('42');
    // SHA-256 of the code, as stored.
    expect(fetched.body.codeSha256).toBe(createHash('sha256').update('6 * 7').digest('hex'));
  });

  it('should return the stored execution for a repeated idempotency key without running the code again', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    const code = 'counter = globals().get("counter", 0) + 1\ncounter';
    const first = await api.execute(session.id, code, { idempotencyKey: 'call_abc' });
    const again = await api.execute(session.id, code, { idempotencyKey: 'call_abc' });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    expect(again.body.result.text).toBe('1');
    const check = await api.execute(session.id, 'counter');
    expect(check.body.result.text).toBe('1');

    const reused = await api.execute(session.id, 'other = 1', { idempotencyKey: 'call_abc' });
    expect(reused.status).toBe(409);
    expect(reused.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('should give a thread its live session back instead of starting a second one', async () => {
    const api = await platform.newTenant();
    const created = await api.post('/v1/sessions', { threadId: 'conversation-1' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ threadId: 'conversation-1', status: 'ready', workerId: platform.workerId });
    const again = await api.post('/v1/sessions', { threadId: 'conversation-1' });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(created.body.id);
  });

  it('should end a deleted session and refuse further executions on it', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    expect((await api.delete(`/v1/sessions/${session.id}`)).status).toBe(204);
    const after = await api.execute(session.id, '1');
    expect(after.status).toBe(409);
    expect(after.body.error.code).toBe('SESSION_ENDED');
    await expect(platform.containerOf(session.id)).rejects.toThrow('no running container');
    expect((await api.get(`/v1/sessions/${session.id}`)).body.status).toBe('ended');
  });

  it('should keep tenants from seeing or touching each other\'s sessions and executions', async () => {
    const alice = await platform.newTenant();
    const bob = await platform.newTenant();
    const session = await alice.createSession({ threadId: 'shared-name' });
    const run = await alice.execute(session.id, 'secret = "alice"');

    expect((await bob.get(`/v1/sessions/${session.id}`)).status).toBe(404);
    expect((await bob.get(`/v1/sessions/${session.id}`)).body.error.code).toBe('SESSION_NOT_FOUND');
    expect((await bob.execute(session.id, 'secret')).status).toBe(404);
    expect((await bob.delete(`/v1/sessions/${session.id}`)).status).toBe(404);
    expect((await bob.get(`/v1/executions/${run.body.id}`)).status).toBe(404);
    expect((await bob.get('/v1/sessions')).body.sessions.map((s: { id: string }) => s.id)).not.toContain(session.id);

    // The same thread id in another tenant is another session.
    const bobs = await bob.createSession({ threadId: 'shared-name' });
    expect(bobs.id).not.toBe(session.id);
    const peek = await bob.execute(bobs.id, 'secret');
    expect(peek.body.status).toBe('error');
    expect(peek.body.error.name).toBe('NameError');
    expect((await alice.get(`/v1/sessions/${session.id}`)).body.status).toBe('ready');
  });

  it('should stream stdout chunks as server-sent events before the code has finished', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    const started = Date.now();
    const res = await fetch(`${platform.url}/v1/sessions/${session.id}/executions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${(api as unknown as { key: string }).key}`,
        'content-type': 'application/json',
        accept: 'text/event-stream',
      },
      body: JSON.stringify({ code: 'import time\nfor i in range(3):\n    print(f"tick {i}", flush=True)\n    time.sleep(0.6)\n"end"' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events: { event: string; data: any; at: number }[] = [];
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body!) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      let sep: number;
      while ((sep = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, sep);
        buffer = buffer.slice(sep + 2);
        const event = /^event: (.*)$/m.exec(block)![1]!;
        const data = JSON.parse(/^data: (.*)$/m.exec(block)![1]!);
        events.push({ event, data, at: Date.now() - started });
      }
    }
    const stdout = events.filter((e) => e.event === 'stdout');
    const done = events.find((e) => e.event === 'done')!;
    expect(stdout.map((e) => e.data.text).join('')).toBe('tick 0\ntick 1\ntick 2\n');
    // The first chunk arrived well before the run finished (it sleeps 1.8 s in all).
    expect(done.at - stdout[0]!.at).toBeGreaterThan(1000);
    expect(events.find((e) => e.event === 'result')!.data.text).toBe("'end'");
    expect(done.data).toMatchObject({ status: 'ok', stdout: 'tick 0\ntick 1\ntick 2\n' });
  });
});
