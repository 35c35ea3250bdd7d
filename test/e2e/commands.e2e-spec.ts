import { startPlatform, type Platform } from './support/platform.js';

type Tenant = Awaited<ReturnType<Platform['newTenant']>>;

// POST /v1/sessions/:id/commands (API.md "Commands, processes and terminals"): a process
// the session's supervisor runs beside the REPL, as the sandbox user, recorded as an
// execution of kind `command`.
describe('Commands', () => {
  let platform: Platform;
  let api: Tenant;
  let sessionId: string;
  let threadId: string;

  beforeAll(async () => {
    platform = await startPlatform();
    api = await platform.newTenant();
    ({ id: sessionId, threadId } = await api.createSession());
  });

  afterAll(async () => {
    await platform?.close();
  });

  const command = (body: Record<string, unknown>, client: Tenant = api, id = sessionId) => client.post(`/v1/sessions/${id}/commands`, body);
  const shell = async (line: string, extra: Record<string, unknown> = {}) => {
    const res = await command({ command: line, ...extra });
    expect(res.status).toBe(200);
    return res.body;
  };

  it('should answer the exit code, stdout and stderr, and record it as a command', async () => {
    const failed = await shell('echo out; echo err >&2; exit 3');
    expect(failed).toMatchObject({ kind: 'command', status: 'error', exitCode: 3, signal: null, stdout: 'out\n', stderr: 'err\n', truncated: false, sessionId, threadId });
    const ok = await command({ argv: ['printf', '%s|', 'a b', 'c'] });
    expect(ok.body).toMatchObject({ status: 'ok', exitCode: 0, stdout: 'a b|c|' });
    const fetched = await api.get(`/v1/executions/${failed.id}`);
    expect(fetched.body).toMatchObject({ id: failed.id, kind: 'command', exitCode: 3 });
    // Operators see it among the executions, with its kind.
    const listed = await platform.admin.get(`/admin/executions?tenantId=${api.tenantId}`);
    expect(listed.body.executions.find((e: { id: string }) => e.id === failed.id)).toMatchObject({ kind: 'command', status: 'error' });
    // A Python run says its kind too, and has no exit code.
    const python = await api.execute(sessionId, '1');
    expect(python.body.kind).toBe('code');
    expect(python.body).not.toHaveProperty('exitCode');
  });

  it('should give the command its stdin, cwd and env, as the sandbox user with HOME /session', async () => {
    await shell('mkdir -p /session/work/sub');
    const res = await shell('pwd; echo "$GREETING"; tr a-z A-Z; id -u; echo "$HOME"', { cwd: '/session/work/sub/../sub/', env: { GREETING: 'hello there' }, stdin: 'from stdin\n' });
    expect(res.stdout).toBe('/session/work/sub\nhello there\nFROM STDIN\n10001\n/session\n');
    // Without stdin the process reads end of file at once.
    expect((await command({ argv: ['cat'], timeoutMs: 5_000 })).body).toMatchObject({ status: 'ok', stdout: '' });
  });

  it('should refuse what cannot be run with a 4xx and a code', async () => {
    const cases: [Record<string, unknown>, number, string][] = [
      [{}, 400, 'INVALID_COMMAND'],
      [{ command: 'true', argv: ['true'] }, 400, 'INVALID_COMMAND'],
      [{ argv: [] }, 400, 'INVALID_COMMAND'],
      [{ command: 'true', cwd: '/etc' }, 400, 'INVALID_CWD'],
      [{ command: 'true', cwd: '/session/../etc' }, 400, 'INVALID_CWD'],
      [{ command: 'true', cwd: 'relative' }, 400, 'INVALID_CWD'],
      [{ command: 'true', env: { 'BAD-NAME': 'x' } }, 400, 'INVALID_ENV'],
      [{ command: 'true', env: { DRYDOCK_SANDBOX_UID: '0' } }, 400, 'INVALID_ENV'],
      [{ command: 'true', env: { HOME: '/tmp' } }, 400, 'INVALID_ENV'],
      [{ command: 'true', env: { OK: 3 } }, 400, 'INVALID_ENV'],
      [{ command: 'true', timeoutMs: 5 }, 400, 'VALIDATION_FAILED'],
      [{ command: 'true', background: 'yes' }, 400, 'VALIDATION_FAILED'],
    ];
    for (const [body, status, code] of cases) {
      const res = await command(body);
      expect([JSON.stringify(body), res.status, res.body.error?.code]).toEqual([JSON.stringify(body), status, code]);
      expect(res.body.error.message).toMatch(/\w+ \w+/);
    }
    // A program that does not exist is the command's own failure, as in a shell.
    expect((await command({ argv: ['no-such-program'] })).body).toMatchObject({ status: 'error', exitCode: 127 });
  });

  it('should kill the whole process group at the time limit and keep the Python variables', async () => {
    expect((await api.execute(sessionId, 'kept = 41')).body.status).toBe('ok');
    const res = await shell('sleep 300 & echo $! > /session/child.pid; sleep 300', { timeoutMs: 1_000 });
    expect(res).toMatchObject({ status: 'timeout', exitCode: null, signal: 'SIGKILL', error: { name: 'TimeoutError' } });
    const child = (await shell('cat /session/child.pid')).stdout.trim();
    expect((await shell(`kill -0 ${child} 2>/dev/null && echo alive || echo gone`)).stdout).toBe('gone\n');
    const after = await api.execute(sessionId, 'kept + 1');
    expect(after.body).toMatchObject({ status: 'ok', stateLost: false, result: { text: '42' } });
  });

  it("should put the files a command writes in the thread and in the next execution, and ingest its artifacts", async () => {
    const res = await shell('mkdir -p notes && echo "from bash" > notes/a.txt && printf "%s" report > artifacts/report.txt');
    expect(res.files.changed).toContain('/notes/a.txt');
    expect(res.artifacts).toHaveLength(1);
    expect(res.artifacts[0]).toMatchObject({ name: 'report.txt', size: 6 });
    const file = await api.request('GET', `/v1/threads/${threadId}/files/content?path=${encodeURIComponent('/notes/a.txt')}`);
    expect([file.status, file.body]).toEqual([200, 'from bash\n']);
    const python = await api.execute(sessionId, "open('/session/notes/a.txt').read()");
    expect(python.body.result.text).toBe("'from bash\\n'");
    // And the other way: a file the REPL wrote is there for the next command.
    await api.execute(sessionId, "open('/session/notes/b.txt', 'w').write('from python')");
    expect((await shell('cat notes/b.txt')).stdout).toBe('from python');
  });

  it('should stream stdout and stderr as server-sent events and end with done', async () => {
    const res = await fetch(`${platform.url}/v1/sessions/${sessionId}/commands`, {
      method: 'POST',
      headers: { authorization: `Bearer ${(api as unknown as { key: string }).key}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ command: 'for i in 1 2 3; do echo "tick $i"; sleep 0.4; done; echo warn >&2' }),
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events: { event: string; data: any; at: number }[] = [];
    const started = Date.now();
    let buffer = '';
    const decoder = new TextDecoder();
    for await (const chunk of res.body!) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      let sep: number;
      while ((sep = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, sep);
        buffer = buffer.slice(sep + 2);
        events.push({ event: /^event: (.*)$/m.exec(block)![1]!, data: JSON.parse(/^data: (.*)$/m.exec(block)![1]!), at: Date.now() - started });
      }
    }
    const stdout = events.filter((e) => e.event === 'stdout');
    const done = events.at(-1)!;
    expect(stdout.map((e) => e.data.text).join('')).toBe('tick 1\ntick 2\ntick 3\n');
    expect(events.filter((e) => e.event === 'stderr').map((e) => e.data.text).join('')).toBe('warn\n');
    expect(done.at - stdout[0]!.at).toBeGreaterThan(600); // the first tick came while it ran
    expect(done).toMatchObject({ event: 'done', data: { kind: 'command', status: 'ok', exitCode: 0 } });
  });

  it('should run a command once per idempotency key, and refuse the key for another command', async () => {
    const key = `cmd-${Date.now()}`;
    const first = await shell('echo once >> /session/once.txt; cat /session/once.txt', { idempotencyKey: key });
    const again = await shell('echo once >> /session/once.txt; cat /session/once.txt', { idempotencyKey: key });
    expect(again.id).toBe(first.id);
    expect((await shell('cat /session/once.txt')).stdout).toBe('once\n');
    const other = await command({ command: 'echo other', idempotencyKey: key });
    expect([other.status, other.body.error.code]).toEqual([409, 'IDEMPOTENCY_KEY_REUSED']);
  });

  it("should answer 404 to another tenant for the session and the command's record", async () => {
    const other = await platform.newTenant();
    const res = await command({ command: 'id' }, other);
    expect([res.status, res.body.error.code]).toEqual([404, 'SESSION_NOT_FOUND']);
    const mine = await shell('true');
    expect((await other.get(`/v1/executions/${mine.id}`)).status).toBe(404);
  });

  it('should leave the session usable after hostile commands', async () => {
    const alive = async () => {
      const res = await shell('echo alive', { timeoutMs: 20_000 });
      expect(res).toMatchObject({ status: 'ok', stdout: 'alive\n' });
    };
    // A fork bomb: the pids limit stops it, the time limit ends it with its group.
    const bomb = await shell('b() { b | b & }; b', { timeoutMs: 3_000 });
    expect(['timeout', 'error', 'ok']).toContain(bomb.status);
    await alive();
    // 1 GB of output: kept up to the session's cap, the rest read and dropped.
    const flood = await shell('head -c 1000000000 /dev/zero | tr "\\0" x', { timeoutMs: 120_000 });
    expect(flood).toMatchObject({ truncated: true });
    expect(flood.stdout.length).toBeLessThanOrEqual(1024 * 1024);
    await alive();
    // Closing its output and input, then going on.
    expect((await shell('exec 1>&- 2>&- 0<&-; sleep 0.3; exit 4')).exitCode).toBe(4);
    await alive();
    // A daemon that double-forks out of the command's session, and writes on.
    await shell('setsid bash -c "while :; do echo daemon; sleep 0.1; done" & disown; echo started');
    const after = await shell('sleep 0.5; echo quiet');
    expect(after.stdout).toBe('quiet\n');
    await alive();
    // Killing every process the sandbox user may signal: the supervisor is not one.
    await shell('kill -9 -1');
    await alive();
    const python = await api.execute(sessionId, 'print("python answers")');
    expect(python.body).toMatchObject({ status: 'ok', stdout: 'python answers\n' });
  });
});

// Background processes: `background: true` answers at once; the process is listed, its
// output read while it runs, its stdin written, signalled, and gone with its session.
describe('Background processes', () => {
  let platform: Platform;
  let api: Tenant;
  let sessionId: string;

  beforeAll(async () => {
    platform = await startPlatform();
    api = await platform.newTenant();
    ({ id: sessionId } = await api.createSession());
  });

  afterAll(async () => {
    await platform?.close();
  });

  const start = async (command: string, client: Tenant = api, id = sessionId) => {
    const res = await client.post(`/v1/sessions/${id}/commands`, { command, background: true });
    expect([res.status, res.body.status]).toEqual([202, 'running']);
    expect(res.body.pid).toBeGreaterThan(1);
    return res.body as { id: string; pid: number };
  };
  const processPath = (processId: string, id = sessionId) => `/v1/sessions/${id}/processes/${processId}`;
  const waitForExit = async (processId: string) => {
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      const res = await api.get(processPath(processId));
      if (res.body.status === 'exited') return res.body;
    }
    throw new Error(`${processId} did not exit`);
  };
  // Reads the output stream until `until` holds for the text so far (or the stream ends).
  const readOutput = async (processId: string, until: (text: string, events: { event: string; data: any }[]) => boolean = () => false) => {
    const controller = new AbortController();
    const res = await fetch(`${platform.url}${processPath(processId)}/output`, {
      headers: { authorization: `Bearer ${(api as unknown as { key: string }).key}`, accept: 'text/event-stream' },
      signal: controller.signal,
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events: { event: string; data: any }[] = [];
    let buffer = '';
    let text = '';
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body!) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let sep: number;
        while ((sep = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, sep);
          buffer = buffer.slice(sep + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          if (!event) continue; // a comment line
          const data = JSON.parse(/^data: (.*)$/m.exec(block)![1]!);
          events.push({ event, data });
          if (event === 'stdout' || event === 'stderr') text += data.text;
        }
        if (until(text, events)) break;
      }
    } finally {
      controller.abort();
    }
    return { text, events };
  };

  it('should start at once, list it, and stream what it printed so far and then live', async () => {
    const started = Date.now();
    const { id, pid } = await start('for i in 1 2 3 4 5 6; do echo "tick $i"; sleep 0.3; done');
    expect(Date.now() - started).toBeLessThan(1_500);
    const listed = await api.get(`/v1/sessions/${sessionId}/processes`);
    expect(listed.body.processes[0]).toMatchObject({ id, pid, status: 'running', exitCode: null, command: 'for i in 1 2 3 4 5 6; do echo "tick $i"; sleep 0.3; done' });
    await new Promise((r) => setTimeout(r, 700));
    // From its start (the kept output), then live, then its exit.
    const { text, events } = await readOutput(id);
    expect(text).toBe('tick 1\ntick 2\ntick 3\ntick 4\ntick 5\ntick 6\n');
    expect(events.at(-1)).toEqual({ event: 'exit', data: { exitCode: 0, signal: null } });
    expect(await waitForExit(id)).toMatchObject({ status: 'exited', exitCode: 0, signal: null });
    // Its record keeps the output; reading an ended process answers it at once.
    const again = await readOutput(id);
    expect(again.text).toBe(text);
    const record = await api.get(`/v1/executions/${id}`);
    expect(record.body).toMatchObject({ kind: 'command', status: 'ok', exitCode: 0, pid, stdout: text });
  });

  it('should take stdin and close it', async () => {
    const { id } = await start('while read line; do echo "got $line"; done; echo "input closed"');
    const write = (body: string, eof = false) =>
      fetch(`${platform.url}${processPath(id)}/stdin${eof ? '?eof=true' : ''}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${(api as unknown as { key: string }).key}`, 'content-type': 'application/octet-stream' },
        body,
      });
    expect((await write('hello\n')).status).toBe(204);
    const { text } = await readOutput(id, (t) => t.includes('got hello'));
    expect(text).toContain('got hello\n');
    expect((await write('bye\n', true)).status).toBe(204);
    expect(await waitForExit(id)).toMatchObject({ exitCode: 0 });
    expect((await api.get(`/v1/executions/${id}`)).body.stdout).toBe('got hello\ngot bye\ninput closed\n');
    const late = await write('more\n');
    expect([late.status, ((await late.json()) as { error: { code: string } }).error.code]).toEqual([409, 'PROCESS_NOT_RUNNING']);
  });

  it('should deliver a signal to the process and its group', async () => {
    const { id } = await start("trap 'echo terminated; exit 143' TERM; sleep 300 & wait");
    await new Promise((r) => setTimeout(r, 300));
    const res = await api.post(`${processPath(id)}/signal`, { signal: 'SIGTERM' });
    expect([res.status, res.body.delivered]).toEqual([202, true]);
    expect(await waitForExit(id)).toMatchObject({ status: 'exited', exitCode: 143 });
    const bad = await api.post(`${processPath(id)}/signal`, { signal: 'SIGSTOP' });
    expect([bad.status, bad.body.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    const ended = await api.post(`${processPath(id)}/signal`, { signal: 'SIGKILL' });
    expect([ended.status, ended.body.error.code]).toEqual([409, 'PROCESS_NOT_RUNNING']);
  });

  it('should keep its output out of executions and commands, which run beside it', async () => {
    const { id } = await start('while :; do echo noise; echo noise >&2; sleep 0.02; done');
    expect((await api.execute(sessionId, 'print("mine")')).body.stdout).toBe('mine\n');
    expect((await api.post(`/v1/sessions/${sessionId}/commands`, { command: 'sleep 0.2; echo mine' })).body.stdout).toBe('mine\n');
    await api.post(`${processPath(id)}/signal`, { signal: 'SIGKILL' });
    expect(await waitForExit(id)).toMatchObject({ signal: 'SIGKILL', exitCode: null });
  });

  it('should answer 404 to another tenant on every route', async () => {
    const { id } = await start('sleep 30');
    const other = await platform.newTenant();
    const routes: [string, string, unknown?][] = [
      ['GET', `/v1/sessions/${sessionId}/processes`],
      ['GET', processPath(id)],
      ['GET', `${processPath(id)}/output`],
      ['POST', `${processPath(id)}/stdin`, 'x'],
      ['POST', `${processPath(id)}/signal`, { signal: 'SIGKILL' }],
    ];
    for (const [method, path, body] of routes) {
      const res = await other.request(method, path, typeof body === 'string' ? { body } : body ? { json: body } : {});
      expect([method, path, res.status]).toEqual([method, path, 404]);
    }
    expect((await api.get(processPath('exe_nosuchprocess00000000'))).body.error.code).toBe('PROCESS_NOT_FOUND');
    await api.post(`${processPath(id)}/signal`, { signal: 'SIGKILL' });
  });

  it('should end with its session', async () => {
    const session = await api.createSession();
    const { id, pid } = await start('sleep 300', api, session.id);
    const container = await platform.containerOf(session.id);
    expect((await api.delete(`/v1/sessions/${session.id}`)).status).toBe(204);
    const listed = await api.get(`/v1/sessions/${session.id}/processes`);
    expect(listed.body.processes).toEqual([expect.objectContaining({ id, pid, status: 'exited' })]);
    expect(await platform.docker.getContainer(container.Id).inspect().then((c) => c.State.Running, () => false)).toBe(false);
  });
});
