import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startPlatform, type Platform } from '../../../test/e2e/support/platform.js';
import { pollUntil } from '../../../test/e2e/support/until.js';
import { renderBar } from '../src/progress-bar.js';

// The CLI as users run it: the built entry in a process of its own (npm run build first),
// against a real platform. spawn, never spawnSync: the gateway runs in this process.
const MAIN = resolve('dist/packages/cli/src/main.js');

interface Chunk {
  at: number;
  stream: 'stdout' | 'stderr';
  text: string;
}

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
  chunks: Chunk[];
  exitedAt: number;
}

interface RunOptions {
  env?: Record<string, string | undefined>;
  input?: string;
  cwd?: string;
  // Called with each chunk as it arrives, and the process (to signal it).
  onChunk?: (chunk: Chunk, child: ChildProcess) => void;
}

function run(command: string, args: string[], options: RunOptions = {}): Promise<Result> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { env: options.env as NodeJS.ProcessEnv, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    const chunks: Chunk[] = [];
    const record = (stream: Chunk['stream']) => (data: Buffer) => {
      chunks.push({ at: Date.now(), stream, text: data.toString() });
      options.onChunk?.(chunks.at(-1)!, child);
    };
    child.stdout.on('data', record('stdout'));
    child.stderr.on('data', record('stderr'));
    child.on('error', fail);
    child.on('close', (code) => {
      const text = (stream: Chunk['stream']) => chunks.filter((c) => c.stream === stream).map((c) => c.text).join('');
      done({ code, stdout: text('stdout'), stderr: text('stderr'), chunks, exitedAt: Date.now() });
    });
    child.stdin.end(options.input ?? '');
  });
}

const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

describe('drydock CLI', () => {
  let platform: Platform;
  let apiKey: string;
  let cliTenantId: string;
  let dir: string;
  let env: Record<string, string | undefined>;
  const drydock = (args: string[], options: Omit<RunOptions, 'cwd'> = {}) => run(process.execPath, [MAIN, ...args], { ...options, env: { ...env, ...options.env }, cwd: dir });
  const script = async (name: string, code: string) => {
    await writeFile(join(dir, name), code);
    return name;
  };

  beforeAll(async () => {
    // The gvisor tier is offered (snapshots, hibernate); sessions ask for it.
    platform = await startPlatform({ SANDBOX_GVISOR_RUNTIME: 'runsc' });
    const tenant = await platform.admin.post('/admin/tenants', { name: `cli-${randomBytes(3).toString('hex')}` });
    apiKey = tenant.body.apiKey;
    cliTenantId = tenant.body.id;
    dir = await mkdtemp(join(tmpdir(), 'drydock-cli-'));
    env = { PATH: process.env.PATH, HOME: process.env.HOME, DRYDOCK_URL: platform.url, DRYDOCK_API_KEY: apiKey };
  });

  afterAll(async () => {
    await platform?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  describe('run', () => {
    it('streams output as the code prints it and exits 0', async () => {
      const file = await script('slow.py', 'import time\nprint("first")\ntime.sleep(2.5)\nprint("second")\n');
      const result = await drydock(['run', file]);
      expect(result.code).toBe(0);
      expect(result.stdout).toBe('first\nsecond\n');
      const first = result.chunks.find((c) => c.stream === 'stdout' && c.text.includes('first'))!;
      expect(first.text).not.toContain('second');
      // The first line was on the terminal while the code still slept.
      expect(result.exitedAt - first.at).toBeGreaterThan(1500);
    }, 60_000);

    it('exits 1 and prints the traceback on stderr when the code raises', async () => {
      const file = await script('boom.py', 'print("before")\nraise ValueError("bad input")\n');
      const result = await drydock(['run', file]);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('before\n');
      expect(result.stderr).toContain('Traceback (most recent call last)');
      expect(result.stderr).toContain('ValueError: bad input');
    }, 60_000);

    it('keeps the thread of the script: variables persist between runs', async () => {
      await script('state.py', 'counter = globals().get("counter", 0) + 1\nprint(counter)\n');
      expect((await drydock(['run', 'state.py'])).stdout).toBe('1\n');
      expect((await drydock(['run', 'state.py'])).stdout).toBe('2\n');
      // Another thread is another session.
      expect((await drydock(['run', 'state.py', '--thread', 'other-state'])).stdout).toBe('1\n');
    }, 60_000);

    it('prints the execution record with --json, reads stdin for -, and exits 1 on a timeout', async () => {
      const result = await drydock(['run', '-', '--json'], { input: 'print(6 * 7)\n' });
      expect(result.code).toBe(0);
      const record = JSON.parse(result.stdout);
      expect(record).toMatchObject({ status: 'ok', stdout: '42\n', threadId: 'stdin' });
      expect(record.id).toMatch(/^exe_/);

      const slow = await drydock(['--json', 'run', '-', '--timeout', '500'], { input: 'import time\ntime.sleep(5)\n' });
      expect(slow.code).toBe(1);
      expect(JSON.parse(slow.stdout)).toMatchObject({ status: 'timeout' });
    }, 60_000);

    it('ends a timed-out run with the reason as its last line, after where the code was, not a bare KeyboardInterrupt', async () => {
      const result = await drydock(['run', '-', '--thread', 'timeout-t', '--timeout', '700'], { input: 'import time\nprint("started", flush=True)\ntime.sleep(30)\n' });
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('started\n');
      const lines = result.stderr.trimEnd().split('\n');
      expect(lines.at(-1)).toBe('TimeoutError: execution exceeded the time limit of 700 ms');
      expect(result.stderr).not.toMatch(/^KeyboardInterrupt/m);
      // Where the code was when it was stopped: the traceback the interrupt left.
      expect(result.stderr).toContain('time.sleep(30)');
      // A timeout interrupts, so the session and its variables live on.
      expect((await drydock(['run', '-', '--thread', 'timeout-t'], { input: 'print("after")\n' })).stdout).toBe('after\n');
    }, 60_000);
  });

  describe('run, stopped by the platform', () => {
    it('ends a run that ran out of memory with its own reason line and exit 1', async () => {
      // A session of 128 MiB for the thread; the code then fills far more than that.
      const res = await fetch(`${platform.url}/v1/sessions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ threadId: 'oom-t', limits: { memoryMb: 128 } }),
      });
      expect(res.status).toBe(201);
      const result = await drydock(['run', '-', '--thread', 'oom-t'], { input: 'blocks = []\nwhile True:\n    blocks.append(bytearray(16 * 1024 * 1024))\n' });
      expect(result.code).toBe(1);
      const last = result.stderr.trimEnd().split('\n').at(-1);
      expect(last).toBe('OutOfMemory: the sandbox ran out of memory and the Python process was killed');
      expect(result.stderr).not.toContain('the run ended with status');
    }, 60_000);
  });

  describe('run, interrupted', () => {
    it('interrupts the code on Ctrl-C, prints its KeyboardInterrupt and exits 130; the variables stay', async () => {
      await script('before.py', 'kept = 42\n');
      expect((await drydock(['run', 'before.py', '--thread', 'ctrl-c'])).code).toBe(0);
      const file = await script('forever.py', 'print("looping", flush=True)\nwhile True:\n    pass\n');
      let sentAt = 0;
      const result = await drydock(['run', file, '--thread', 'ctrl-c', '--timeout', '240000'], {
        onChunk: (chunk, child) => {
          if (chunk.stream === 'stdout' && chunk.text.includes('looping') && !sentAt) {
            sentAt = Date.now();
            child.kill('SIGINT');
          }
        },
      });
      expect(result.code).toBe(130);
      expect(result.exitedAt - sentAt).toBeLessThan(30_000);
      expect(result.stdout).toBe('looping\n');
      expect(result.stderr).toContain('drydock: interrupting the run');
      expect(result.stderr).toContain('KeyboardInterrupt');
      const after = await drydock(['run', '-', '--thread', 'ctrl-c'], { input: 'print(kept)\n' });
      expect(after.stdout).toBe('42\n');
    }, 60_000);

    it('stops waiting on a second Ctrl-C, the code interrupted all the same', async () => {
      // Code that ignores SIGINT: the platform stops it only after a second's grace, so
      // the second Ctrl-C (sent once the first is acknowledged) comes before the end.
      const code = 'import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint("looping", flush=True)\nwhile True:\n    pass\n';
      const file = await script('forever-again.py', code);
      const result = await drydock(['run', file, '--thread', 'ctrl-c-twice', '--timeout', '240000'], {
        onChunk: (chunk, child) => {
          if (chunk.stream === 'stdout' && chunk.text.includes('looping')) child.kill('SIGINT');
          if (chunk.stream === 'stderr' && chunk.text.includes('drydock: interrupting')) child.kill('SIGINT');
        },
      });
      expect(result.code).toBe(130);
      expect(result.stderr).toContain('error INTERRUPTED: Stopped waiting for the run in session');
      // The loop was stopped (with its interpreter): the thread's next run does not wait behind it.
      const next = await drydock(['run', '-', '--thread', 'ctrl-c-twice'], { input: 'print("next")\n' });
      expect(next.stdout).toBe('next\n');
    }, 60_000);
  });

  describe('exec', () => {
    // A session made through the API, to address by its id.
    const sessionFor = async (threadId: string): Promise<string> => {
      const res = await fetch(`${platform.url}/v1/sessions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ threadId }),
      });
      return ((await res.json()) as { id: string }).id;
    };

    it("prints a command's output and exits with its code; one argument with spaces is a shell line, several an argv", async () => {
      const id = await sessionFor('exec-id');
      const failed = await drydock(['exec', id, '--', 'bash', '-c', 'echo hi; echo oops >&2; exit 3']);
      expect(failed).toMatchObject({ code: 3, stdout: 'hi\n', stderr: 'oops\n' });
      const line = await drydock(['exec', id, '--', 'echo one two three | wc -w']);
      expect(line).toMatchObject({ code: 0, stdout: '3\n', stderr: '' });
      // No shell: the arguments arrive as they are, $HOME unexpanded, "a b" one argument.
      const argv = await drydock(['exec', id, '--', 'printf', '%s|', 'a b', '$HOME', '--json']);
      expect(argv).toMatchObject({ code: 0, stdout: 'a b|$HOME|--json|' });
      // A signal: 128 + its number, as a shell reports it.
      expect((await drydock(['exec', id, '--', 'kill -TERM $$'])).code).toBe(143);
    }, 60_000);

    it('streams the output as the command writes it', async () => {
      const result = await drydock(['exec', '--thread', 'exec-stream', '--', 'echo first; sleep 2.5; echo second']);
      expect(result).toMatchObject({ code: 0, stdout: 'first\nsecond\n' });
      const first = result.chunks.find((c) => c.stream === 'stdout' && c.text.includes('first'))!;
      expect(first.text).not.toContain('second');
      expect(result.exitedAt - first.at).toBeGreaterThan(1500);
    }, 60_000);

    it("runs in --thread's session, with --cwd, --env and piped stdin; the files are the thread's", async () => {
      expect((await drydock(['exec', '--thread', 'exec-t', '--', 'mkdir', '-p', '/session/work/sub'])).code).toBe(0);
      const result = await drydock(['exec', '--thread', 'exec-t', '--cwd', 'work/sub', '--env', 'GREETING=hello there', '-e', 'B=x=y', '--', 'pwd; echo "$GREETING $B"; tr a-z A-Z > out.txt'], {
        input: 'from stdin\n',
      });
      expect(result).toMatchObject({ code: 0, stdout: '/session/work/sub\nhello there x=y\n' });
      expect((await drydock(['files', 'get', '/work/sub/out.txt', '-', '--thread', 'exec-t'])).stdout).toBe('FROM STDIN\n');
      // The same session as `run` uses for the thread: Python sees the file at once.
      const python = await drydock(['run', '-', '--thread', 'exec-t'], { input: 'print(open("/session/work/sub/out.txt").read().strip())' });
      expect(python.stdout).toBe('FROM STDIN\n');
      // --no-stdin leaves the command's stdin empty.
      expect(await drydock(['exec', '--thread', 'exec-t', '--no-stdin', '--', 'cat'], { input: 'ignored' })).toMatchObject({ code: 0, stdout: '' });
    }, 60_000);

    it('prints the record with --json, exits 1 at the time limit and 3 for what the platform refuses', async () => {
      const json = await drydock(['--json', 'exec', '--thread', 'exec-json', '--', 'bash', '-c', 'echo out; exit 7']);
      expect(json.code).toBe(7);
      expect(JSON.parse(json.stdout)).toMatchObject({ kind: 'command', status: 'error', exitCode: 7, stdout: 'out\n', threadId: 'exec-json' });
      const slow = await drydock(['exec', '--thread', 'exec-json', '--timeout', '500', '--', 'sleep', '30']);
      expect(slow.code).toBe(1);
      expect(slow.stderr).toContain('drydock: TimeoutError');
      const refused = await drydock(['exec', '--thread', 'exec-json', '--cwd', '/etc', '--', 'pwd']);
      expect(refused.code).toBe(3);
      expect(refused.stderr).toMatch(/^error INVALID_CWD: /);
      expect((await drydock(['exec', 'ses_nope', '--', 'true'])).stderr).toMatch(/^error SESSION_NOT_FOUND: /);
    }, 60_000);

    it('sends SIGINT to the command on Ctrl-C and exits as it did', async () => {
      let sentAt = 0;
      const result = await drydock(['exec', '--thread', 'exec-ctrl-c', '--', "trap 'echo caught; exit 5' INT; echo go; sleep 60 & wait"], {
        onChunk: (chunk, child) => {
          if (chunk.stream === 'stdout' && chunk.text.includes('go') && !sentAt) {
            sentAt = Date.now();
            child.kill('SIGINT');
          }
        },
      });
      expect(result).toMatchObject({ code: 5, stdout: 'go\ncaught\n' });
      expect(result.exitedAt - sentAt).toBeLessThan(30_000);
      expect(result.stderr).toContain('drydock: interrupting the command');
    }, 60_000);
  });

  // `drydock shell` as a person runs it: in a terminal (util-linux `script` gives it a
  // pseudo-terminal of 100x30), typing into the remote shell and reading what it shows.
  describe('shell', () => {
    it('should run what is typed in a remote terminal of the local size, and exit with its code', async () => {
      const { id } = await (await fetch(`${platform.url}/v1/sessions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: '{}',
      })).json() as { id: string };
      const line = [process.execPath, MAIN, 'shell', id].map(quote).join(' ');
      const child = spawn('script', ['-qfec', `stty cols 100 rows 30; exec ${line}`, '/dev/null'], { env: env as NodeJS.ProcessEnv, cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
      let shown = '';
      const waiters: (() => void)[] = [];
      child.stdout.on('data', (data: Buffer) => {
        shown += data.toString();
        waiters.splice(0).forEach((wake) => wake());
      });
      const until = async (needle: string) => {
        const deadline = Date.now() + 30_000;
        while (!shown.includes(needle)) {
          if (Date.now() > deadline) throw new Error(`${needle} not shown; got ${JSON.stringify(shown.slice(-1500))}`);
          await new Promise<void>((wake) => {
            waiters.push(wake);
            setTimeout(wake, 500);
          });
        }
      };
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      child.stdin.write('echo hi-$((40+2)); stty size\r');
      await until('hi-42');
      await until('30 100');
      child.stdin.write('exit 3\r');
      expect(await exited).toBe(3);
    }, 60_000);

    it('should say what to give when the session is missing', async () => {
      const result = await drydock(['shell', 'not-a-session']);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/not a session id/);
    });
  });

  describe('batch', () => {
    it('draws a live progress bar on a terminal, then streams every result', async () => {
      const items = Array.from({ length: 500 }, (_, i) => JSON.stringify({ code: `print(${i}*${i})`, id: `item-${i}` })).join('\n');
      await writeFile(join(dir, 'items.jsonl'), items + '\n');
      // util-linux `script` gives the CLI a pseudo-terminal; what it drew comes out on stdout.
      const command = ['stty cols 120;', 'exec', quote(process.execPath), quote(MAIN), 'batch', 'submit', 'items.jsonl', '--concurrency', '4'].join(' ');
      const shown = await run('script', ['-qfec', command, '/dev/null'], { env, cwd: dir });
      expect(shown.code).toBe(0);

      const id = /bat_[A-Za-z0-9_]+/.exec(shown.stdout)?.[0];
      expect(id).toBeDefined();
      // Each frame starts with \r; its "n/500 done" is the count when it was drawn.
      const frames = shown.stdout.split('\r').map((frame) => /\[[█░]+\] (\d+)\/500 done {2}(\d+) failed/.exec(frame)).filter((m) => m !== null);
      const counts = frames.map((m) => Number(m[1]));
      expect(new Set(counts).size).toBeGreaterThanOrEqual(3);
      expect(counts).toEqual([...counts].sort((a, b) => a - b));
      expect(counts.at(-1)).toBe(500);
      expect(frames.at(-1)![2]).toBe('0');
      expect(shown.stdout).toMatch(/items\/s/);
      expect(shown.stdout).toContain(`${id}  completed  500/500 done  ok 500`);

      const results = await drydock(['batch', 'results', id!]);
      expect(results.code).toBe(0);
      const lines = results.stdout.trimEnd().split('\n').map((line) => JSON.parse(line));
      expect(lines).toHaveLength(500);
      lines.forEach((item, i) => expect(item).toMatchObject({ index: i, id: `item-${i}`, status: 'ok', stdout: `${i * i}\n` }));

      // A reader that stops early (head) ends the stream quietly.
      const head = await run('sh', ['-c', `${quote(process.execPath)} ${quote(MAIN)} batch results ${id} | head -n 1`], { env, cwd: dir });
      expect(head).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(head.stdout)).toMatchObject({ index: 0, stdout: '0\n' });

      const status = await drydock(['batch', 'status', id!, '--json']);
      expect(JSON.parse(status.stdout)).toMatchObject({ id, status: 'completed', total: 500, counts: { ok: 500 } });
    }, 180_000);

    it('prints plain progress lines when stderr is not a terminal and exits 1 when an item fails', async () => {
      const items = [{ code: 'print("ok")' }, { code: 'raise RuntimeError("no")', id: 'bad' }].map((i) => JSON.stringify(i)).join('\n');
      const result = await drydock(['batch', 'submit', '-'], { input: items });
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(/^bat_\S+\n$/);
      expect(result.stderr).not.toContain('\r');
      expect(result.stderr).toContain('progress: 2/2 done  1 failed');
      expect(result.stderr).toMatch(/completed {2}2\/2 done {2}ok 1 {2}error 1/);

      const results = await drydock(['batch', 'results', result.stdout.trim()]);
      expect(results.stdout.trimEnd().split('\n').map((l) => JSON.parse(l).status)).toEqual(['ok', 'error']);
    }, 60_000);

    it('runs examples/cli-batch.sh: submit, then results, exit 1 for the item meant to fail', async () => {
      const saved = join(dir, 'example-results.jsonl');
      const result = await run('bash', [resolve('examples/cli-batch.sh'), resolve('examples/batch-items.jsonl'), saved], { env, cwd: dir });
      expect(result.code).toBe(1);
      const records = (await readFile(saved, 'utf8')).trimEnd().split('\n').map((line) => JSON.parse(line));
      expect(records.map((r) => [r.id, r.status])).toEqual([['squares', 'ok'], ['mean', 'ok'], ['word-count', 'ok'], ['report', 'ok'], ['fails', 'error']]);
      expect(records[2].stdout).toBe('9\n');
      expect(result.stderr).toContain('items that did not end ok:');
      expect(result.stderr).toContain('this item fails on purpose');
    }, 60_000);

    it('stops waiting on Ctrl-C with exit 130, leaving the batch running', async () => {
      const items = Array.from({ length: 3 }, () => JSON.stringify({ code: 'import time\ntime.sleep(30)' })).join('\n');
      const result = await drydock(['batch', 'submit', '-', '--concurrency', '1'], {
        input: items,
        onChunk: (chunk, child) => chunk.stream === 'stderr' && chunk.text.startsWith('progress:') && child.kill('SIGINT'),
      });
      expect(result.code).toBe(130);
      const id = result.stdout.trim();
      expect(result.stderr).toContain(`error INTERRUPTED: Stopped waiting; batch ${id} keeps running`);
      expect((await drydock(['batch', 'status', id])).stdout).toMatch(new RegExp(`^${id}  running`));
      expect((await drydock(['batch', 'cancel', id, '--kill'])).code).toBe(0);
    }, 60_000);

    it('returns at once with --no-wait and cancels with cancel --kill', async () => {
      const items = Array.from({ length: 6 }, () => JSON.stringify({ code: 'import time\ntime.sleep(30)' })).join('\n');
      const submitted = await drydock(['batch', 'submit', '-', '--no-wait', '--json', '--concurrency', '1'], { input: items });
      expect(submitted.code).toBe(0);
      const { id, total } = JSON.parse(submitted.stdout);
      expect(total).toBe(6);
      const cancelled = await drydock(['batch', 'cancel', id, '--kill']);
      expect(cancelled.code).toBe(0);
      // cancelling while the item it had started is being killed, cancelled once it ended.
      expect(cancelled.stdout).toMatch(new RegExp(`^${id}  cancell(ing|ed)  `));
    }, 60_000);
  });

  describe('exit codes', () => {
    it.each([
      ['no command', []],
      ['an unknown command', ['launch']],
      ['run without a file', ['run']],
      ['an unknown option', ['run', 'x.py', '--bogus']],
      ['a subcommand group without its command', ['files']],
      ['a bad option value', ['run', 'x.py', '--timeout', 'soon']],
      ['a missing required option', ['files', 'ls']],
      ['exec without a session id or --thread', ['exec', '--', 'ls', '-la']],
      ['exec without a command', ['exec', '--thread', 't']],
      ['exec with a session id and --thread', ['exec', 'ses_x', '--thread', 't', '--', 'ls']],
      ['exec with an --env that is not NAME=VALUE', ['exec', '--thread', 't', '--env', 'NOVALUE', '--', 'env']],
      ['exec with --allow and a session id', ['exec', 'ses_x', '--allow', 'pypi.org', '--', 'ls']],
      ['network without a session id or --thread', ['network']],
      ['network with a session id and --thread', ['network', 'ses_x', '--thread', 't']],
      ['network with a bad --verdict', ['network', 'ses_x', '--verdict', 'maybe']],
      ['network narrow without --allow or --none', ['network', 'narrow', 'ses_x']],
    ])('%s prints usage on stderr and exits 2', async (_name, args) => {
      const result = await drydock(args);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('Usage: drydock');
      expect(result.stdout).toBe('');
    });

    it('--help and --version exit 0 on stdout', async () => {
      const help = await drydock(['--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain('Exit codes');
      expect((await drydock(['--version'])).stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    });

    it('exits 4 without an API key, before reading anything', async () => {
      const result = await drydock(['run', '-'], { env: { DRYDOCK_API_KEY: undefined } });
      expect(result.code).toBe(4);
      expect(result.stderr).toContain('error MISSING_API_KEY');
      const json = await drydock(['--json', 'files', 'ls', '--thread', 't'], { env: { DRYDOCK_API_KEY: '' } });
      expect(json.code).toBe(4);
      expect(JSON.parse(json.stderr)).toMatchObject({ error: { code: 'MISSING_API_KEY' } });
    });

    it('exits 3 with the code on stderr for a platform error', async () => {
      const result = await drydock(['files', 'get', '/missing.txt', '-', '--thread', 'no-such-files']);
      expect(result.code).toBe(3);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/^error FILE_NOT_FOUND: /);
      const json = await drydock(['files', 'get', '/missing.txt', '--thread', 'no-such-files', '--json']);
      expect(json.code).toBe(3);
      expect(JSON.parse(json.stderr)).toMatchObject({ error: { code: 'FILE_NOT_FOUND', message: expect.any(String) } });
      const badKey = await drydock(['artifacts', 'ls'], { env: { DRYDOCK_API_KEY: 'ddk_not_a_key' } });
      expect(badKey.code).toBe(3);
      expect(badKey.stderr).toMatch(/^error INVALID_API_KEY: /);
    });

    it('exits 2 for a local file it cannot read or an items line that is not JSON', async () => {
      expect((await drydock(['run', 'nope.py'])).code).toBe(2);
      const bad = await drydock(['batch', 'submit', '-'], { input: '{"code":"print(1)"}\nnot json\n' });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('stdin line 2: not JSON');
    });
  });

  describe('files, artifacts and tenants', () => {
    it('puts, lists and gets thread files; the code sees them under /session', async () => {
      await writeFile(join(dir, 'local.csv'), 'a,b\n1,2\n');
      const put = await drydock(['files', 'put', 'local.csv', '/data/input.csv', '--thread', 'files-t']);
      expect(put.code).toBe(0);
      expect(put.stdout).toContain('/data/input.csv');

      const ls = await drydock(['files', 'ls', '/data', '--thread', 'files-t', '--json']);
      expect(JSON.parse(ls.stdout)).toEqual([expect.objectContaining({ path: '/data/input.csv', type: 'file', size: 8 })]);
      expect((await drydock(['files', 'ls', '--thread', 'files-t'])).stdout).toMatch(/dir\s+-\s+\S+\s+\/data/);

      const code = 'rows = open("/session/data/input.csv").read().splitlines()\nopen("/session/data/count.txt", "w").write(str(len(rows)))\n';
      expect((await drydock(['run', '-', '--thread', 'files-t'], { input: code })).code).toBe(0);
      const stdout = await drydock(['files', 'get', 'data/count.txt', '-', '--thread', 'files-t']);
      expect(stdout).toMatchObject({ code: 0, stdout: '2' });
      const copied = await drydock(['files', 'get', '/data/input.csv', 'copy.csv', '--thread', 'files-t']);
      expect(copied.code).toBe(0);
      expect(await readFile(join(dir, 'copy.csv'), 'utf8')).toBe('a,b\n1,2\n');
    }, 60_000);

    it('lists, downloads and links an artifact the code wrote', async () => {
      const code = 'import os\nos.makedirs("/session/artifacts", exist_ok=True)\nopen("/session/artifacts/report.txt", "w").write("the report")\n';
      expect((await drydock(['run', '-', '--thread', 'art-t'], { input: code })).code).toBe(0);
      const ls = await drydock(['artifacts', 'ls', '--thread', 'art-t', '--json']);
      const [artifact] = JSON.parse(ls.stdout);
      expect(artifact).toMatchObject({ name: 'report.txt', threadId: 'art-t', size: 10 });
      expect((await drydock(['artifacts', 'ls', '--thread', 'art-t'])).stdout).toContain(artifact.id);

      expect((await drydock(['artifacts', 'get', artifact.id])).code).toBe(0);
      expect(await readFile(join(dir, 'report.txt'), 'utf8')).toBe('the report');
      expect((await drydock(['artifacts', 'get', artifact.id, '-'])).stdout).toBe('the report');

      const url = (await drydock(['artifacts', 'url', artifact.id, '--ttl', '60'])).stdout.trim();
      expect(await (await fetch(url)).text()).toBe('the report');
    }, 60_000);

    it('creates a tenant with the admin key, whose API key works', async () => {
      const admin = { DRYDOCK_API_KEY: undefined, DRYDOCK_ADMIN_KEY: process.env.DRYDOCK_ADMIN_KEY };
      expect((await drydock(['tenants', 'create', 'x'], { env: { DRYDOCK_ADMIN_KEY: undefined } })).code).toBe(4);
      const created = await drydock(['tenants', 'create', `cli-made-${randomBytes(3).toString('hex')}`, '--json'], { env: admin });
      expect(created.code).toBe(0);
      const tenant = JSON.parse(created.stdout);
      expect(tenant.id).toMatch(/^ten_/);
      expect(tenant.apiKey).toMatch(/^ddk_/);
      const text = await drydock(['tenants', 'create', `cli-text-${randomBytes(3).toString('hex')}`], { env: admin });
      expect(text.stdout).toMatch(/^api key\s+ddk_\S+$/m);

      const used = await drydock(['run', '-', '--json'], { input: 'print("new tenant")', env: { DRYDOCK_API_KEY: tenant.apiKey } });
      expect(JSON.parse(used.stdout)).toMatchObject({ status: 'ok', stdout: 'new tenant\n' });
    }, 60_000);
  });

  describe('sessions and files rm', () => {
    it('lists, shows and ends sessions by id or --thread, with exit 3 for an unknown one', async () => {
      const id = (await drydock(['sessions', 'create', '--thread', 'ls-t'])).stdout.trim();
      expect(id).toMatch(/^ses_/);
      const ls = await drydock(['sessions', 'ls']);
      expect(ls.code).toBe(0);
      expect(ls.stdout.split('\n')[0]).toMatch(/^ID\s+THREAD\s+STATUS\s+TEMPLATE\s+NETWORK\s+CREATED\s+LAST-USED$/);
      expect(ls.stdout).toMatch(new RegExp(`^${id}\\s+ls-t\\s+\\w+`, 'm'));
      expect(JSON.parse((await drydock(['sessions', 'ls', '--thread', 'ls-t', '--json'])).stdout)).toEqual([expect.objectContaining({ id, threadId: 'ls-t' })]);

      const shown = await drydock(['sessions', 'get', id]);
      expect(shown.code).toBe(0);
      expect(shown.stdout).toMatch(new RegExp(`^session\\s+${id}$`, 'm'));
      expect(shown.stdout).toMatch(/^thread\s+ls-t$/m);
      expect(shown.stdout).toMatch(/^limits\s+\d+ MiB, /m);
      expect(JSON.parse((await drydock(['sessions', 'get', '--thread', 'ls-t', '--json'])).stdout)).toMatchObject({ id, threadId: 'ls-t' });

      const removed = await drydock(['sessions', 'rm', id]);
      expect(removed).toMatchObject({ code: 0, stdout: `${id}\n` });
      expect((await drydock(['sessions', 'ls'])).stdout).not.toContain(id);
      const all = JSON.parse((await drydock(['sessions', 'ls', '--all', '--json'])).stdout) as { id: string; status: string }[];
      expect(all.find((s) => s.id === id)?.status).toBe('ended');

      // By thread: its live session.
      const other = (await drydock(['sessions', 'create', '--thread', 'rm-t'])).stdout.trim();
      expect(await drydock(['sessions', 'rm', '--thread', 'rm-t', '--json'])).toMatchObject({ code: 0, stdout: expect.stringContaining(other) });
      const none = await drydock(['sessions', 'rm', '--thread', 'rm-t']);
      expect(none.code).toBe(3);
      expect(none.stderr).toMatch(/^error SESSION_NOT_FOUND: /);
      const unknown = await drydock(['sessions', 'get', 'ses_nope']);
      expect(unknown.code).toBe(3);
      expect(unknown.stderr).toMatch(/^error SESSION_NOT_FOUND: /);
      expect((await drydock(['sessions', 'get'])).code).toBe(2);
      expect((await drydock(['sessions', 'rm', 'ses_a', '--thread', 'x'])).code).toBe(2);
    }, 60_000);

    it('removes thread files, folders only with -r, with exit 3 for a missing one', async () => {
      await writeFile(join(dir, 'rm.txt'), 'x');
      for (const remote of ['/a.txt', '/keep.txt', '/sub/b.txt']) {
        expect((await drydock(['files', 'put', 'rm.txt', remote, '--thread', 'rm-files'])).code).toBe(0);
      }
      expect(await drydock(['files', 'rm', 'a.txt', '--thread', 'rm-files'])).toMatchObject({ code: 0, stdout: '/a.txt\n' });
      const folder = await drydock(['files', 'rm', '/sub', '--thread', 'rm-files']);
      expect(folder.code).toBe(2);
      expect(folder.stderr).toMatch(/^error IS_A_DIRECTORY: /);
      expect(JSON.parse((await drydock(['files', 'rm', '-r', '/sub', '--thread', 'rm-files', '--json'])).stdout)).toEqual({ deleted: ['/sub'] });
      const missing = await drydock(['files', 'rm', '/nope.txt', '--thread', 'rm-files']);
      expect(missing.code).toBe(3);
      expect(missing.stderr).toMatch(/^error FILE_NOT_FOUND: /);
      const left = JSON.parse((await drydock(['files', 'ls', '--thread', 'rm-files', '--json'])).stdout) as { path: string }[];
      expect(left.map((e) => e.path)).toEqual(['/keep.txt']);
    }, 60_000);

    it('streams a file through put and get, stdin to stdout', async () => {
      // 3 MiB, more than one chunk each way.
      const big = Buffer.alloc(3 * 1024 * 1024, 'abcdefgh');
      await writeFile(join(dir, 'big.bin'), big);
      expect((await drydock(['files', 'put', 'big.bin', '/big.bin', '--thread', 'stream-files', '--json'])).stdout).toContain(`"size": ${big.length}`);
      expect((await drydock(['files', 'get', '/big.bin', 'big-copy.bin', '--thread', 'stream-files'])).code).toBe(0);
      expect((await readFile(join(dir, 'big-copy.bin'))).equals(big)).toBe(true);
      expect(await drydock(['files', 'put', '-', '/piped.txt', '--thread', 'stream-files'], { input: 'piped in\n' })).toMatchObject({ code: 0 });
      expect(await drydock(['files', 'get', '/piped.txt', '-', '--thread', 'stream-files'])).toMatchObject({ code: 0, stdout: 'piped in\n' });
      await writeFile(join(dir, 'empty.txt'), '');
      expect(JSON.parse((await drydock(['files', 'put', 'empty.txt', '/empty.txt', '--thread', 'stream-files', '--json'])).stdout)).toMatchObject({ size: 0 });
      expect(await drydock(['files', 'get', '/empty.txt', '-', '--thread', 'stream-files'])).toMatchObject({ code: 0, stdout: '' });
      expect((await drydock(['files', 'put', 'no-such.bin', '/x', '--thread', 'stream-files'])).code).toBe(2);
      expect((await drydock(['files', 'put', '.', '/x', '--thread', 'stream-files'])).code).toBe(2);
      expect((await drydock(['files', 'get', '/big.bin', join(dir, 'no-dir', 'x'), '--thread', 'stream-files'])).code).toBe(2);
    }, 60_000);
  });

  describe('operators: tenants, usage and workers', () => {
    const admin = { DRYDOCK_API_KEY: undefined, DRYDOCK_ADMIN_KEY: process.env.DRYDOCK_ADMIN_KEY };

    it('lists and shows tenants and changes their limits, refusing a bad NAME=VALUE with exit 2', async () => {
      const tenant = await platform.newTenant();
      const ls = await drydock(['tenants', 'ls'], { env: admin });
      expect(ls.code).toBe(0);
      expect(ls.stdout).toMatch(new RegExp(`^${tenant.tenantId}\\s+\\S+\\s+active\\s+`, 'm'));
      expect(JSON.parse((await drydock(['tenants', 'ls', '--json'], { env: admin })).stdout).map((t: { id: string }) => t.id)).toContain(tenant.tenantId);
      const shown = await drydock(['tenants', 'get', tenant.tenantId], { env: admin });
      expect(shown.stdout).toMatch(/^status\s+active$/m);
      expect(shown.stdout).toContain('no limits set');

      const changed = await drydock(['tenants', 'limits', tenant.tenantId, 'memoryMb=1024', 'cpus=0.5', 'network=pypi.org,files.pythonhosted.org'], { env: admin });
      expect(changed.code).toBe(0);
      expect(changed.stdout).toMatch(/^memoryMb\s+1024$/m);
      expect(changed.stdout).toMatch(/^network\s+pypi\.org, files\.pythonhosted\.org$/m);
      expect(JSON.parse((await drydock(['tenants', 'limits', tenant.tenantId, 'network=none', '--json'], { env: admin })).stdout).limits).toEqual({ memoryMb: 1024, cpus: 0.5 });
      // Only the ones named change; with none it shows them.
      expect((await drydock(['tenants', 'limits', tenant.tenantId], { env: admin })).stdout).toMatch(/^cpus\s+0\.5$/m);
      for (const bad of ['bogus=1', 'memoryMb=lots', 'memoryMb', 'maxSessions=1.5']) {
        const refused = await drydock(['tenants', 'limits', tenant.tenantId, bad], { env: admin });
        expect(refused.code).toBe(2);
        expect(refused.stdout).toBe('');
      }
      const outOfRange = await drydock(['tenants', 'limits', tenant.tenantId, 'memoryMb=1'], { env: admin });
      expect(outOfRange.code).toBe(3);
      expect(outOfRange.stderr).toMatch(/^error VALIDATION_FAILED: /);
      const unknown = await drydock(['tenants', 'get', 'ten_nope'], { env: admin });
      expect(unknown.code).toBe(3);
      expect(unknown.stderr).toMatch(/^error TENANT_NOT_FOUND: /);
      expect((await drydock(['tenants', 'ls'], { env: { DRYDOCK_ADMIN_KEY: undefined } })).code).toBe(4);
    }, 60_000);

    it("suspends a tenant, whose key is refused until it is resumed, and deletes one only with --yes", async () => {
      const created = JSON.parse((await drydock(['tenants', 'create', `cli-life-${randomBytes(3).toString('hex')}`, '--json'], { env: admin })).stdout);
      const asTenant = { DRYDOCK_API_KEY: created.apiKey };
      expect((await drydock(['run', '-', '--thread', 'life'], { input: 'print(1)', env: asTenant })).code).toBe(0);

      expect(await drydock(['tenants', 'suspend', created.id], { env: admin })).toMatchObject({ code: 0, stdout: `${created.id}  suspended\n` });
      const refused = await drydock(['files', 'ls', '--thread', 'life'], { env: asTenant });
      expect(refused.code).toBe(3);
      expect(refused.stderr).toMatch(/^error TENANT_SUSPENDED: /);
      expect((await drydock(['tenants', 'get', created.id], { env: admin })).stdout).toMatch(/^status\s+suspended since /m);
      expect(await drydock(['tenants', 'resume', created.id], { env: admin })).toMatchObject({ code: 0, stdout: `${created.id}  active\n` });
      expect((await drydock(['files', 'ls', '--thread', 'life'], { env: asTenant })).code).toBe(0);

      const unconfirmed = await drydock(['tenants', 'rm', created.id], { env: admin });
      expect(unconfirmed.code).toBe(2);
      expect(unconfirmed.stderr).toMatch(/^error CONFIRMATION_REQUIRED: .*--yes/);
      const deleted = await drydock(['tenants', 'rm', created.id, '--yes', '--json'], { env: admin });
      expect(deleted.code).toBe(0);
      expect(JSON.parse(deleted.stdout)).toMatchObject({ id: created.id });
      expect((await drydock(['tenants', 'get', created.id], { env: admin })).code).toBe(3);
      expect((await drydock(['files', 'ls', '--thread', 'life'], { env: asTenant })).stderr).toMatch(/^error INVALID_API_KEY: /);
    }, 60_000);

    it("prints a tenant's usage per day and what it stores, and refuses a bad range", async () => {
      const tenantId = cliTenantId;
      expect((await drydock(['run', '-', '--thread', 'usage-t'], { input: 'print("counted")\n' })).code).toBe(0);
      let usage!: { days: { tenantId: string; executions: { count: number } }[] };
      // Recorded when the run ends, by the worker.
      await pollUntil(async () => {
        const json = await drydock(['usage', '--tenant', tenantId, '--json'], { env: admin });
        expect(json.code).toBe(0);
        usage = JSON.parse(json.stdout);
        return usage.days.length > 0;
      }, 20_000, 200, 'the run counted in the usage');
      expect(usage.days.every((d: { tenantId: string }) => d.tenantId === tenantId)).toBe(true);
      expect(usage.days[0].executions.count).toBeGreaterThan(0);
      const text = await drydock(['usage', '--tenant', tenantId], { env: admin });
      expect(text.stdout).toMatch(/^DAY\s+TENANT\s+EXEC\s+EXEC-CPU-S/m);
      expect(text.stdout).toMatch(new RegExp(`^\\d{4}-\\d{2}-\\d{2}\\s+${tenantId}\\s+[1-9]`, 'm'));
      expect(text.stdout).toMatch(/^TENANT\s+FILES\s+ARTIFACTS\s+ARTIFACT-COUNT$/m);
      const badRange = await drydock(['usage', '--from', '2026-02-01', '--to', '2026-01-01'], { env: admin });
      expect(badRange.code).toBe(3);
      expect(badRange.stderr).toMatch(/^error INVALID_RANGE: /);
      expect((await drydock(['usage'], { env: { DRYDOCK_ADMIN_KEY: undefined } })).code).toBe(4);
    }, 60_000);

    it('lists the live workers and drains one, which then shows as draining or drained', async () => {
      const extra = await platform.addWorker({ WORKER_POOL_SIZE: '0' });
      try {
        const ls = await drydock(['workers', 'ls'], { env: admin });
        expect(ls.code).toBe(0);
        expect(ls.stdout.split('\n')[0]).toMatch(/^ID\s+HOST\s+STATE\s+SESSIONS\s+POOL\s+DOCKER\s+STARTED\s+LAST-SEEN$/);
        expect(ls.stdout).toMatch(new RegExp(`^${extra.id}\\s+\\S+\\s+active\\s+0/`, 'm'));
        expect(ls.stdout).toMatch(new RegExp(`^${platform.workerId}\\s`, 'm'));
        const drained = await drydock(['workers', 'drain', extra.id], { env: admin });
        expect(drained).toMatchObject({ code: 0, stdout: `${extra.id}  drain requested  (0 sessions to hand back)\n` });
        await pollUntil(async () => {
          const workers = JSON.parse((await drydock(['workers', 'ls', '--json'], { env: admin })).stdout) as { id: string; state: string }[];
          return ['draining', 'drained'].includes(workers.find((w) => w.id === extra.id)?.state ?? '');
        }, 20_000, 200, 'the worker draining');
        const unknown = await drydock(['workers', 'drain', 'no-such-worker'], { env: admin });
        expect(unknown.code).toBe(3);
        expect(unknown.stderr).toMatch(/^error WORKER_NOT_FOUND: /);
      } finally {
        await extra.stop();
      }
    }, 60_000);
  });

  describe('login', () => {
    let config: string;
    // No key in the environment: only what drydock login saved.
    const saved = () => ({ env: { DRYDOCK_API_KEY: undefined, XDG_CONFIG_HOME: config } });

    beforeAll(async () => {
      config = await mkdtemp(join(tmpdir(), 'drydock-config-'));
    });
    afterAll(async () => {
      if (config) await rm(config, { recursive: true, force: true });
    });

    it('saves the URL and a key it checked in a file only the user can read, which later commands use for that gateway only', async () => {
      const file = join(config, 'drydock', 'config.json');
      const wrong = await drydock(['login'], { ...saved(), input: 'ddk_not_a_key\n' });
      expect(wrong.code).toBe(3);
      expect(wrong.stderr).toMatch(/^error INVALID_API_KEY: /m);
      await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });

      const login = await drydock(['login'], { ...saved(), input: `${apiKey}\n` });
      expect(login.code).toBe(0);
      expect(login.stderr).toBe(`Logged in to ${platform.url}; the key is saved in ${file}\n`);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ url: platform.url, apiKey });

      expect(await drydock(['run', '-', '--thread', 'login-t'], { ...saved(), input: 'print("saved key")\n' })).toMatchObject({ code: 0, stdout: 'saved key\n' });
      // The environment wins over the saved key.
      expect((await drydock(['files', 'ls', '--thread', 'login-t'], { env: { DRYDOCK_API_KEY: 'ddk_not_a_key', XDG_CONFIG_HOME: config } })).code).toBe(3);
      // Another gateway is not sent the saved key.
      const elsewhere = await drydock(['files', 'ls', '--thread', 'login-t', '--url', 'http://127.0.0.1:9'], saved());
      expect(elsewhere.code).toBe(4);
      expect(elsewhere.stderr).toContain(`error MISSING_API_KEY: No API key: run drydock login, set DRYDOCK_API_KEY or pass --api-key (the key saved by drydock login is for ${platform.url}`);

      // The URL is saved too: without DRYDOCK_URL the saved gateway is used.
      expect((await drydock(['files', 'ls', '--thread', 'login-t'], { env: { DRYDOCK_API_KEY: undefined, DRYDOCK_URL: undefined, XDG_CONFIG_HOME: config } })).code).toBe(0);

      expect(await drydock(['logout'], saved())).toMatchObject({ code: 0, stderr: `Removed ${file}\n` });
      expect((await drydock(['files', 'ls', '--thread', 'login-t'], saved())).code).toBe(4);
    }, 60_000);

    it('asks for the key on a terminal without echoing it', async () => {
      const line = [process.execPath, MAIN, 'login'].map(quote).join(' ');
      const child = spawn('script', ['-qfec', line, '/dev/null'], { env: { ...env, DRYDOCK_API_KEY: undefined, XDG_CONFIG_HOME: config } as NodeJS.ProcessEnv, cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
      let shown = '';
      const prompted = new Promise<void>((resolve) =>
        child.stdout.on('data', (data: Buffer) => {
          shown += data.toString();
          if (shown.includes('API key (ddk_…): ')) resolve();
        }),
      );
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      await prompted;
      // Typed with a mistake erased by backspace.
      child.stdin.write(`${apiKey}x\x7f\r`);
      expect(await exited).toBe(0);
      expect(shown).toContain('Logged in to');
      expect(shown).not.toContain(apiKey);
      expect(JSON.parse(await readFile(join(config, 'drydock', 'config.json'), 'utf8')).apiKey).toBe(apiKey);
    }, 60_000);

    it('exits 4 for a saved file it cannot read, which a new login replaces', async () => {
      await mkdir(join(config, 'drydock'), { recursive: true });
      await writeFile(join(config, 'drydock', 'config.json'), 'not json');
      const broken = await drydock(['files', 'ls', '--thread', 'login-t'], saved());
      expect(broken.code).toBe(4);
      expect(broken.stderr).toMatch(/^error INVALID_CONFIG: /);
      expect((await drydock(['login', '--api-key', apiKey], saved())).code).toBe(0);
      expect((await drydock(['files', 'ls', '--thread', 'login-t'], saved())).code).toBe(0);
      const empty = await drydock(['login'], { ...saved(), input: '' });
      expect(empty.code).toBe(4);
      expect(empty.stderr).toMatch(/^error MISSING_API_KEY: /);
    }, 60_000);
  });

  // Network policies (docs/network.md), without the sandbox reaching anything: its
  // tenant's ceiling is set by an operator; no connection is ever logged.
  describe('network', () => {
    let tenantId: string;
    let netEnv: Record<string, string | undefined>;
    const admin = { DRYDOCK_API_KEY: undefined, DRYDOCK_ADMIN_KEY: process.env.DRYDOCK_ADMIN_KEY };

    beforeAll(async () => {
      const tenant = await platform.admin.post('/admin/tenants', {
        name: `cli-net-${randomBytes(3).toString('hex')}`,
        limits: { network: { allow: ['pypi.org', 'files.pythonhosted.org', '*.example.com'] } },
      });
      expect(tenant.status).toBe(201);
      tenantId = tenant.body.id;
      netEnv = { DRYDOCK_API_KEY: tenant.body.apiKey };
    });

    it('creates a session with --allow whose policy drydock network shows, by id or thread, and narrows it but never widens it', async () => {
      const created = await drydock(['sessions', 'create', '--thread', 'net-t', '--allow', 'pypi.org', '--allow', 'API.example.com,files.pythonhosted.org'], { env: netEnv });
      expect(created).toMatchObject({ code: 0, stderr: '' });
      expect(created.stdout).toMatch(/^ses_\w+\n$/);
      const id = created.stdout.trim();

      const shown = await drydock(['network', id], { env: netEnv });
      expect(shown).toMatchObject({ code: 0, stderr: '' });
      expect(shown.stdout).toMatch(new RegExp(`^session\\s+${id}$`, 'm'));
      expect(shown.stdout).toMatch(/^thread\s+net-t$/m);
      expect(shown.stdout).toMatch(/^policy\s+pypi\.org, api\.example\.com, files\.pythonhosted\.org$/m);
      expect(shown.stdout).toContain('no connections yet');
      const json = await drydock(['network', '--thread', 'net-t', '--json'], { env: netEnv });
      expect(JSON.parse(json.stdout)).toEqual({ policy: { allow: ['pypi.org', 'api.example.com', 'files.pythonhosted.org'] }, connections: [], next: null });
      expect(JSON.parse((await drydock(['sessions', 'create', '--thread', 'net-t', '--json'], { env: netEnv })).stdout)).toMatchObject({ id, network: { allow: ['pypi.org', 'api.example.com', 'files.pythonhosted.org'] } });

      // The thread's live session is returned as it is: --allow applies to a new one.
      const again = await drydock(['sessions', 'create', '--thread', 'net-t', '--allow', 'pypi.org'], { env: netEnv });
      expect(again).toMatchObject({ code: 0, stdout: `${id}\n` });
      expect(again.stderr).toContain(`drydock: session ${id} was already live with network pypi.org, api.example.com, files.pythonhosted.org; --allow applies to a new session`);

      const narrowed = await drydock(['network', 'narrow', id, '--allow', 'pypi.org'], { env: netEnv });
      expect(narrowed.code).toBe(0);
      expect(narrowed.stdout).toMatch(/^policy\s+pypi\.org$/m);
      expect(JSON.parse((await drydock(['network', id, '--json'], { env: netEnv })).stdout).policy).toEqual({ allow: ['pypi.org'] });

      const widened = await drydock(['network', 'narrow', id, '--allow', 'pypi.org', '--allow', 'files.pythonhosted.org'], { env: netEnv });
      expect(widened.code).toBe(3);
      expect(widened.stderr).toMatch(/^error NETWORK_NOT_ALLOWED: .*\{"entries":\["files\.pythonhosted\.org"\]\}/);
      const none = await drydock(['network', 'narrow', '--thread', 'net-t', '--none', '--json'], { env: netEnv });
      expect(JSON.parse(none.stdout)).toMatchObject({ id, network: { allow: [] } });
      expect((await drydock(['network', id], { env: netEnv })).stdout).toMatch(/^policy\s+nothing allowed/m);
    }, 120_000);

    it('starts the sessions of run and exec --thread with --allow, and refuses entries outside the ceiling with them named', async () => {
      // A host off the list: the worker's proxy refuses it itself (403), nothing is reached, and the attempt is logged.
      const code = 'import urllib.request, urllib.error\ntry: urllib.request.urlopen("http://denied.example.com/", timeout=20)\nexcept urllib.error.HTTPError as e: print(e.code)\n';
      const ran = await drydock(['run', '-', '--thread', 'net-run', '--allow', 'pypi.org'], { input: code, env: netEnv });
      expect(ran).toMatchObject({ code: 0, stdout: '403\n' });
      expect(JSON.parse((await drydock(['network', '--thread', 'net-run', '--json'], { env: netEnv })).stdout).policy).toEqual({ allow: ['pypi.org'] });
      // The log is written in batches (at most ~250 ms late).
      let log = await drydock(['network', '--thread', 'net-run'], { env: netEnv });
      for (const deadline = Date.now() + 15_000; log.stdout.includes('no connections yet') && Date.now() < deadline; ) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        log = await drydock(['network', '--thread', 'net-run'], { env: netEnv });
      }
      expect(log.code).toBe(0);
      expect(log.stdout).toMatch(/^policy\s+pypi\.org\n\nTIME\s+VERDICT\s+HOST:PORT\s+IN\s+OUT\s+REASON\n/m);
      expect(log.stdout).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ {2}denied {3}denied\.example\.com:80 {2}\d+(\.\d+)? (B|KiB)\s+\d+(\.\d+)? (B|KiB)\s+\S.*pypi\.org/m);
      expect((await drydock(['network', '--thread', 'net-run', '--verdict', 'allowed'], { env: netEnv })).stdout).toContain('no connections allowed yet');
      const row = await drydock(['admin', 'egress', '--tenant', tenantId, '--verdict', 'denied'], { env: admin });
      expect(row.stdout).toMatch(/^TIME\s+TENANT\s+SESSION\s+VERDICT\s+HOST:PORT\s+IN\s+OUT\s+REASON\n/);
      expect(row.stdout).toMatch(new RegExp(`Z {2}${tenantId} {2}ses_\\w+ {2}denied {3}denied\\.example\\.com:80 `));
      const execd = await drydock(['exec', '--thread', 'net-exec', '--allow', '*.example.com', '--', 'true'], { env: netEnv });
      expect(execd.code).toBe(0);
      expect((await drydock(['network', '--thread', 'net-exec'], { env: netEnv })).stdout).toMatch(/^policy\s+\*\.example\.com$/m);

      const outside = await drydock(['sessions', 'create', '--thread', 'net-out', '--allow', 'pypi.org', '--allow', 'evil.test'], { env: netEnv });
      expect(outside).toMatchObject({ code: 3, stdout: '' });
      expect(outside.stderr).toMatch(/^error NETWORK_NOT_ALLOWED: .*\{"entries":\["evil\.test"\]\}/);
      const json = await drydock(['run', '-', '--thread', 'net-out', '--allow', 'evil.test', '--json'], { input: 'print(1)', env: netEnv });
      expect(json.code).toBe(3);
      expect(JSON.parse(json.stderr)).toMatchObject({ error: { code: 'NETWORK_NOT_ALLOWED', status: 422, details: { entries: ['evil.test'] } } });
      // No thread of a refused request has a session.
      expect((await drydock(['network', '--thread', 'net-out'], { env: netEnv })).stderr).toMatch(/^error SESSION_NOT_FOUND: /);
    }, 120_000);

    it('says that a session started without --allow has no network, and cannot be narrowed into one', async () => {
      const created = await drydock(['sessions', 'create', '--thread', 'net-none']);
      expect(created.code).toBe(0);
      const id = created.stdout.trim();
      const shown = await drydock(['network', id]);
      expect(shown.code).toBe(0);
      expect(shown.stdout).toMatch(/^policy\s+none \(no network\)$/m);
      expect(shown.stdout).toContain(`${id} has no network`);
      expect(JSON.parse((await drydock(['network', id, '--json'])).stdout)).toEqual({ policy: null, connections: [], next: null });
      const narrowed = await drydock(['network', 'narrow', id, '--allow', 'pypi.org']);
      expect(narrowed.code).toBe(3);
      expect(narrowed.stderr).toMatch(/^error NETWORK_NOT_ALLOWED: /);
    }, 60_000);

    it("submits a batch with --allow, and shows operators its items' connections by --batch", async () => {
      const code = 'import urllib.request, urllib.error\ntry: urllib.request.urlopen("http://denied.example.com/", timeout=20)\nexcept urllib.error.HTTPError as e: print(e.code)\n';
      const submitted = await drydock(['batch', 'submit', '-', '--allow', 'pypi.org', '--no-wait', '--json'], { input: `${JSON.stringify({ code })}\n`, env: netEnv });
      expect(submitted.code).toBe(0);
      const batch = JSON.parse(submitted.stdout);
      const status = await drydock(['batch', 'status', batch.id, '--json'], { env: netEnv });
      expect(JSON.parse(status.stdout).network).toEqual({ allow: ['pypi.org'] });
      let log = { connections: [] as { batchId: string; batchItem: number; verdict: string; host: string }[] };
      for (const deadline = Date.now() + 60_000; log.connections.length === 0 && Date.now() < deadline; ) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        log = JSON.parse((await drydock(['admin', 'egress', '--batch', batch.id, '--json'], { env: admin })).stdout);
      }
      expect(log.connections).toEqual([expect.objectContaining({ batchId: batch.id, batchItem: 0, verdict: 'denied', host: 'denied.example.com' })]);
      const rows = await drydock(['admin', 'egress', '--batch', batch.id], { env: admin });
      expect(rows.stdout).toMatch(new RegExp(`Z {2}${tenantId} {2}${batch.id}#0 {2}denied {3}denied\\.example\\.com:80 `));
      const outside = await drydock(['batch', 'submit', '-', '--allow', 'evil.test'], { input: '{"code":"1"}\n', env: netEnv });
      expect([outside.code, outside.stderr]).toEqual([3, expect.stringMatching(/^error NETWORK_NOT_ALLOWED: /)]);
    }, 90_000);

    it('lists the egress log for operators with the admin key', async () => {
      expect((await drydock(['admin', 'egress'], { env: { DRYDOCK_ADMIN_KEY: undefined } })).code).toBe(4);
      const json = await drydock(['admin', 'egress', '--tenant', tenantId, '--verdict', 'allowed', '--from', '2020-01-01', '--json'], { env: admin });
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toEqual({ connections: [], next: null });
      expect(await drydock(['admin', 'egress', '--tenant', tenantId, '--verdict', 'allowed'], { env: admin })).toMatchObject({ code: 0, stdout: '', stderr: '' });
      const badRange = await drydock(['admin', 'egress', '--from', '2026-02-01', '--to', '2026-01-01'], { env: admin });
      expect(badRange.code).toBe(3);
      expect(badRange.stderr).toMatch(/^error INVALID_RANGE: /);
    }, 60_000);
  });

  describe('templates', () => {
    const stepChunk = (result: Result, text: string) => result.chunks.find((c) => c.stream === 'stderr' && c.text.includes(text));

    it('builds a template from a Dockerfile and a context file, streaming its log with progress lines, then prints NAME:VERSION and the digest', async () => {
      await mkdir(join(dir, 'tpl'), { recursive: true });
      await writeFile(join(dir, 'tpl', 'Dockerfile'), 'FROM drydock\nCOPY greeting.txt /etc/greeting\nRUN cp /etc/greeting /etc/hi\n');
      await writeFile(join(dir, 'tpl', 'greet.txt'), 'hi from the template\n');
      const result = await drydock(['templates', 'build', 'cli-hi', '-f', 'tpl/Dockerfile', '--file', 'greeting.txt=tpl/greet.txt', '--description', 'says hi']);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^cli-hi:\d+ {2}sha256:[0-9a-f]{64}\n$/);
      // Not a terminal: the log and plain progress lines, no carriage returns.
      expect(result.stderr).not.toContain('\r');
      expect(result.stderr).toContain('Step 2/3 : COPY greeting.txt /etc/greeting\n');
      expect(result.stderr).toMatch(/^progress: step 3\/3 {2}\d+s$/m);
      expect(result.stderr).toMatch(/^progress: self-test {2}\d+s$/m);
      expect(result.stderr).toContain('drydock: self-test passed\n');
      // Streamed: the first step was on stderr before the build had ended.
      expect(result.exitedAt - stepChunk(result, 'Step 1/3')!.at).toBeGreaterThan(500);

      const ls = await drydock(['templates', 'ls']);
      expect(ls.stdout).toMatch(/^NAME\s+VERSION\s+STATUS\s+OWNER\s+DESCRIPTION$/m);
      expect(ls.stdout).toMatch(/^cli-hi\s+1\s+ready\s+own\s+says hi$/m);
      const json = JSON.parse((await drydock(['templates', 'ls', '--json'])).stdout);
      expect(json).toContainEqual({ name: 'cli-hi', shared: false, description: 'says hi', poolSize: 0, latest: { version: 1, status: 'ready' } });
      const logs = await drydock(['templates', 'logs', 'cli-hi:1']);
      expect(logs).toMatchObject({ code: 0, stderr: '' });
      expect(logs.stdout).toContain('Step 3/3 : RUN cp /etc/greeting /etc/hi\n');
    }, 300_000);

    it('draws the build progress in place on a terminal', async () => {
      await writeFile(join(dir, 'tpl', 'Dockerfile.tty'), 'FROM drydock\nRUN echo one > /etc/one\nRUN echo two\n');
      const command = ['stty cols 100;', 'exec', quote(process.execPath), quote(MAIN), 'templates', 'build', 'cli-hi', '-f', 'tpl/Dockerfile.tty'].join(' ');
      const shown = await run('script', ['-qfec', command, '/dev/null'], { env, cwd: dir });
      expect(shown.code).toBe(0);
      // Frames start with \r: the bar and the step, below the log lines.
      const frames = shown.stdout.split('\r').map((frame) => /^\[([█░]{20})\] (Step \d\/3 : RUN echo \w+(?: > \/etc\/one)?|self-test)/.exec(frame)).filter((m) => m !== null);
      expect(frames.map((m) => m[2])).toEqual(expect.arrayContaining(['Step 2/3 : RUN echo one > /etc/one', 'Step 3/3 : RUN echo two', 'self-test']));
      expect(frames.find((m) => m[2] === 'self-test')![1]).toBe('█'.repeat(20));
      expect(shown.stdout).toMatch(/cli-hi:2 {2}sha256:[0-9a-f]{64}/);
    }, 300_000);

    it('starts sessions from it with --template (run, exec), and says when a live session runs another image', async () => {
      const ran = await drydock(['run', '-', '--thread', 'tpl-run', '--template', 'cli-hi:1'], { input: 'print(open("/etc/hi").read(), end="")\n' });
      expect(ran).toMatchObject({ code: 0, stdout: 'hi from the template\n' });
      // The name alone: its newest ready version (2, built on the terminal).
      const exec = await drydock(['exec', '--thread', 'tpl-exec', '--template', 'cli-hi', '--', 'cat', '/etc/one']);
      expect(exec).toMatchObject({ code: 0, stdout: 'one\n', stderr: '' });

      // A batch from it: every item starts from that version.
      const batch = await drydock(['batch', 'submit', '-', '--template', 'cli-hi:1', '--json'], { input: '{"code": "print(open(\'/etc/hi\').read(), end=\'\')"}\n' });
      expect(batch.code).toBe(0);
      const final = JSON.parse(batch.stdout);
      expect(final).toMatchObject({ template: 'cli-hi:1', counts: { ok: 1 } });
      const results = await drydock(['batch', 'results', final.id]);
      expect(JSON.parse(results.stdout.trim())).toMatchObject({ status: 'ok', stdout: 'hi from the template\n' });

      expect((await drydock(['exec', '--thread', 'tpl-plain', '--', 'true'])).code).toBe(0);
      const other = await drydock(['exec', '--thread', 'tpl-plain', '--template', 'cli-hi', '--', 'test', '-e', '/etc/hi']);
      expect(other.code).toBe(1);
      expect(other.stderr).toMatch(/^drydock: session ses_\S+ was already live on the platform image; --template cli-hi applies to a new session/m);
    }, 120_000);

    it('exits 1 with the failing step when the build fails, and 2 for a bad name or --file', async () => {
      await writeFile(join(dir, 'tpl', 'Dockerfile.bad'), 'FROM drydock\nRUN echo about to fail >&2 && exit 3\n');
      const failed = await drydock(['templates', 'build', 'cli-broken', '-f', 'tpl/Dockerfile.bad']);
      expect(failed.code).toBe(1);
      expect(failed.stdout).toBe('');
      expect(failed.stderr).toMatch(/^drydock: cli-broken:1 failed: step 2\/2 \(RUN echo about to fail >&2 && exit 3\) failed: .*\nabout to fail\n$/m);
      const json = await drydock(['templates', 'build', 'cli-broken', '-f', '-', '--json'], { input: 'FROM drydock\nRUN exit 4\n' });
      expect(json).toMatchObject({ code: 1, stderr: '' });
      expect(JSON.parse(json.stdout)).toMatchObject({ name: 'cli-broken', version: 2, status: 'failed', error: expect.stringMatching(/^step 2\/2 \(RUN exit 4\) failed/) });
      expect((await drydock(['templates', 'logs', 'cli-broken'])).code).toBe(1);
      expect((await drydock(['run', '-', '--template', 'cli-broken'], { input: 'print(1)' })).stderr).toContain('error TEMPLATE_NOT_READY');

      expect((await drydock(['templates', 'build', 'Not_A_Name'])).code).toBe(2);
      expect((await drydock(['templates', 'build', 'x', '--file', '../outside.txt'])).code).toBe(2);
      expect((await drydock(['templates', 'build', 'x', '-f', 'tpl/missing'])).stderr).toContain('error LOCAL_FILE_UNREADABLE');
      const refused = await drydock(['templates', 'build', 'cli-refused', '-f', '-'], { input: 'FROM python:3.12\n' });
      expect(refused.code).toBe(3);
      expect(refused.stderr).toContain('error INVALID_DOCKERFILE');
      expect((await drydock(['templates', 'rm', 'cli-broken'])).code).toBe(0);
    }, 120_000);

    it('removes a template: ls no longer shows it and no session starts from it', async () => {
      const removed = await drydock(['templates', 'rm', 'cli-hi']);
      expect(removed).toMatchObject({ code: 0, stdout: 'cli-hi deleted\n' });
      expect((await drydock(['templates', 'ls'])).stdout).not.toMatch(/^cli-hi\s/m);
      const run = await drydock(['run', '-', '--thread', 'tpl-gone', '--template', 'cli-hi'], { input: 'print(1)' });
      expect(run.code).toBe(3);
      expect(run.stderr).toContain('error TEMPLATE_NOT_FOUND');
      expect((await drydock(['templates', 'rm', 'cli-hi'])).code).toBe(3);
    }, 60_000);
  });

  it('fits the bar to the terminal', () => {
    const progress = { done: 250, failed: 3, cancelled: 0, total: 500 };
    const line = renderBar(progress, 41.23, 6, 100);
    expect(line).toMatch(/^\[█{20}░{20}\] 250\/500 done {2}3 failed {2}41 items\/s {2}ETA 6s$/);
    expect(renderBar(progress, null, null, 30)).toBe('250/500 done  3 failed  -- it');
  });

  describe('hibernate and snapshots', () => {
    it('hibernates a gvisor session, snapshots it, forks it, lists and removes the snapshot, with exit 3 for an unknown one', async () => {
      const created = await drydock(['sessions', 'create', '--thread', 'cli-gvisor', '--tier', 'gvisor']);
      expect(created.code).toBe(0);
      const session = created.stdout.trim();
      await script('setx.py', 'x = 20\n');
      expect((await drydock(['run', 'setx.py', '--thread', 'cli-gvisor'])).code).toBe(0);
      const hibernated = await drydock(['sessions', 'hibernate', session]);
      expect([hibernated.code, hibernated.stdout]).toEqual([0, `${session}\n`]);
      expect((await drydock(['sessions', 'get', session])).stdout).toMatch(/status\s+hibernated since/);

      const taken = await drydock(['snapshots', 'create', '--thread', 'cli-gvisor']);
      expect(taken.code).toBe(0);
      const snapshot = taken.stdout.trim();
      expect(snapshot).toMatch(/^snp_/);
      expect((await drydock(['snapshots', 'ls'])).stdout).toContain(snapshot);
      const fork = await drydock(['sessions', 'create', '--from-snapshot', snapshot, '--thread', 'cli-fork']);
      expect(fork.code).toBe(0);
      await script('double.py', 'print(x * 2)\n');
      expect((await drydock(['run', 'double.py', '--thread', 'cli-fork'])).stdout).toBe('40\n');
      const refused = await drydock(['sessions', 'create', '--from-snapshot', snapshot, '--tier', 'gvisor']);
      expect(refused.code).toBe(2);
      expect((await drydock(['snapshots', 'rm', snapshot])).stdout).toBe(`${snapshot}\n`);
      const gone = await drydock(['snapshots', 'get', snapshot]);
      expect(gone.code).toBe(3);
      expect(gone.stderr).toContain('SNAPSHOT_NOT_FOUND');
    }, 120_000);

    it('refuses to hibernate a runc session with CHECKPOINT_NOT_AVAILABLE (exit 3)', async () => {
      const session = (await drydock(['sessions', 'create', '--thread', 'cli-runc'])).stdout.trim();
      const result = await drydock(['sessions', 'hibernate', session]);
      expect(result.code).toBe(3);
      expect(result.stderr).toContain('CHECKPOINT_NOT_AVAILABLE');
    }, 60_000);
  });
});
