import { startPlatform, type Platform } from './support/platform.js';
import { TerminalClient } from './support/terminal-client.js';

type Tenant = Awaited<ReturnType<Platform['newTenant']>>;

// GET /v1/sessions/:id/pty (API.md "Commands, processes and terminals"): an interactive
// shell on a pseudo-terminal in the session's container, over a WebSocket, relayed by
// the gateway and the session's worker.
describe('Terminals', () => {
  let platform: Platform;
  let api: Tenant;
  let other: Tenant;
  let sessionId: string;
  let threadId: string;

  beforeAll(async () => {
    platform = await startPlatform();
    [api, other] = await Promise.all([platform.newTenant(), platform.newTenant()]);
    ({ id: sessionId, threadId } = await api.createSession());
  });

  afterAll(async () => {
    await platform?.close();
  });

  const ptyUrl = (id = sessionId, query = 'cols=80&rows=24') => `${platform.url}/v1/sessions/${id}/pty?${query}`;
  const open = async (client: Tenant = api, id = sessionId, query?: string): Promise<TerminalClient> => {
    const terminal = await TerminalClient.open(ptyUrl(id, query), client.authHeaders);
    if (!(terminal instanceof TerminalClient)) throw new Error(`the terminal did not open: ${JSON.stringify(terminal)}`);
    return terminal;
  };
  const refusal = async (url: string, headers: Record<string, string> = {}) => {
    const answer = await TerminalClient.open(url, headers);
    if (answer instanceof TerminalClient) {
      answer.close();
      throw new Error('the terminal opened');
    }
    return answer;
  };

  it('should run what is typed, see a resize, and end with the exit code of the shell', async () => {
    expect((await api.execute(sessionId, 'kept = 41')).body.status).toBe('ok');
    const terminal = await open();
    terminal.type('echo hi-$((40+2)); tty\r');
    const shown = await terminal.until(/hi-42\r\n\/dev\/pts\/\d+/);
    expect(shown).not.toContain('not a tty');
    terminal.send({ type: 'resize', cols: 100, rows: 40 });
    terminal.type('stty size\r');
    await terminal.until('40 100');
    // As the sandbox user, in /session, beside the REPL: its variables are still there.
    terminal.type('echo "$(id -u):$PWD:$TERM"\r');
    await terminal.until('10001:/session:xterm-256color');
    terminal.type('exit 3\r');
    expect(await terminal.message('exit')).toMatchObject({ type: 'exit', exitCode: 3, signal: null });
    expect(await terminal.closed()).toBe(1000);
    expect((await api.execute(sessionId, 'kept + 1')).body.result.text).toBe('42');
  });

  it('should put what the terminal writes in /session into the thread with the next run', async () => {
    const terminal = await open();
    terminal.type('mkdir -p tty && echo "typed in a terminal" > tty/note.txt && echo wrote-$((6*7))\r');
    await terminal.until('wrote-42');
    terminal.close();
    expect((await api.execute(sessionId, 'open("/session/tty/note.txt").read()')).body.result.text).toContain('typed in a terminal');
    const file = await api.get(`/v1/threads/${threadId}/files/content?path=/tty/note.txt`);
    expect([file.status, file.body]).toEqual([200, 'typed in a terminal\n']);
  });

  it('should open with a one-use token for browsers, which no other session or second use takes', async () => {
    const issued = await api.post(`/v1/sessions/${sessionId}/pty-tokens`);
    expect(issued.status).toBe(201);
    expect(issued.body).toEqual({ token: expect.stringMatching(/^pty_/), expiresAt: expect.any(String) });
    expect(new Date(issued.body.expiresAt).getTime() - Date.now()).toBeLessThanOrEqual(60_000);
    const terminal = await TerminalClient.open(ptyUrl(sessionId, `token=${issued.body.token}`));
    if (!(terminal instanceof TerminalClient)) throw new Error(JSON.stringify(terminal));
    terminal.type('echo by-token-$((1+1))\r');
    await terminal.until('by-token-2');
    terminal.close();
    const again = await refusal(ptyUrl(sessionId, `token=${issued.body.token}`));
    expect([again.status, again.body.error.code]).toEqual([401, 'INVALID_PTY_TOKEN']);
    // A token names its session.
    const { id: second } = await api.createSession();
    const forFirst = (await api.post(`/v1/sessions/${sessionId}/pty-tokens`)).body.token;
    const elsewhere = await refusal(ptyUrl(second, `token=${forFirst}`));
    expect([elsewhere.status, elsewhere.body.error.code]).toEqual([401, 'INVALID_PTY_TOKEN']);
    await api.delete(`/v1/sessions/${second}`);
  });

  it('should refuse before the upgrade with the error envelope, and keep other tenants out', async () => {
    const anonymous = await refusal(ptyUrl());
    expect([anonymous.status, anonymous.body.error.code]).toEqual([401, 'UNAUTHORIZED']);
    const wrongKey = await refusal(ptyUrl(), { authorization: 'Bearer ddk_not-a-key' });
    expect([wrongKey.status, wrongKey.body.error.code]).toEqual([401, 'INVALID_API_KEY']);
    const foreign = await refusal(ptyUrl(), other.authHeaders);
    expect([foreign.status, foreign.body.error.code]).toEqual([404, 'SESSION_NOT_FOUND']);
    expect((await other.post(`/v1/sessions/${sessionId}/pty-tokens`)).body.error.code).toBe('SESSION_NOT_FOUND');
    const badSize = await refusal(ptyUrl(sessionId, 'cols=0&rows=24'), api.authHeaders);
    expect([badSize.status, badSize.body.error.code]).toEqual([400, 'INVALID_TERMINAL_SIZE']);
    // Plain HTTP is told to upgrade.
    const plain = await api.get(`/v1/sessions/${sessionId}/pty`);
    expect([plain.status, plain.body.error.code]).toEqual([426, 'UPGRADE_REQUIRED']);
    const { id: ended } = await api.createSession();
    await api.delete(`/v1/sessions/${ended}`);
    const gone = await refusal(ptyUrl(ended), api.authHeaders);
    expect([gone.status, gone.body.error.code]).toEqual([409, 'SESSION_ENDED']);
  });

  it('should answer a text frame it cannot take with an error message and keep the terminal', async () => {
    const terminal = await open();
    terminal.socket.send('not json');
    expect(await terminal.message('error')).toMatchObject({ code: 'INVALID_TERMINAL_MESSAGE' });
    terminal.send({ type: 'resize', cols: 5000, rows: 1 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(terminal.messages.filter((m) => m.type === 'error').map((m) => m.code)).toEqual(['INVALID_TERMINAL_MESSAGE', 'INVALID_TERMINAL_SIZE']);
    terminal.type('echo still-$((2+3))\r');
    await terminal.until('still-5');
    terminal.close();
  });

  it('should run several terminals at once, at most four, and free their places on hang-up', async () => {
    const { id } = await api.createSession();
    const terminals = await Promise.all([0, 1, 2, 3].map(() => open(api, id)));
    terminals.forEach((terminal, i) => terminal.type(`echo term-${i}-$((${i}*10))\r`));
    await Promise.all(terminals.map((terminal, i) => terminal.until(`term-${i}-${i * 10}`)));
    const fifth = await refusal(ptyUrl(id), api.authHeaders);
    expect([fifth.status, fifth.body.error.code]).toEqual([429, 'TERMINAL_LIMIT']);
    // A shell that ignores the hang-up is killed a few seconds after its client went.
    terminals[0]!.type("trap '' HUP; echo trapped-$((1+1))\r");
    await terminals[0]!.until('trapped-2');
    terminals.forEach((terminal) => terminal.close());
    // Four open again only once all four went, the one that ignored SIGHUP included.
    const reopened: TerminalClient[] = [];
    for (let attempt = 0; attempt < 100 && reopened.length < 4; attempt++) {
      const answer = await TerminalClient.open(ptyUrl(id), api.authHeaders);
      if (answer instanceof TerminalClient) reopened.push(answer);
      else await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(reopened).toHaveLength(4);
    reopened.forEach((terminal) => terminal.close());
    await api.delete(`/v1/sessions/${id}`);
  });

  it('should end the terminal with its session', async () => {
    const { id } = await api.createSession();
    const terminal = await open(api, id);
    terminal.type('echo up-$((3+4))\r');
    await terminal.until('up-7');
    expect((await api.delete(`/v1/sessions/${id}`)).status).toBe(204);
    expect(await terminal.message('exit')).toMatchObject({ type: 'exit', exitCode: null, reason: expect.stringMatching(/sandbox/) });
    expect(await terminal.closed()).toBe(1000);
  });
});
