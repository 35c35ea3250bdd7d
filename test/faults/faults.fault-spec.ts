import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import Docker from 'dockerode';
import { runMigrations } from '../../migrations/index.js';
import { ApiClient, type ApiResponse } from '../e2e/support/api-client.js';
import { startGatewayProcess, type GatewayProcess } from '../e2e/support/gateway-process.js';
import { postgres, redis, unixSocketSettings } from '../e2e/support/services.js';
import { startWorkerProcess, type WorkerProcess } from '../e2e/support/worker-process.js';

// Fault injection against the real deployment: a gateway and two workers as processes,
// several clients running code in their own sessions with idempotency keys, retrying
// what did not get an answer as a real client would (same key, back-off, Retry-After).
// One fault at a time: a worker SIGKILLed, Redis restarted, PostgreSQL restarted, a
// sandbox container killed from outside. For each: attempted, ok, failed (by code), lost
// (no answer within the client's patience, or an answered execution whose record is
// missing), duplicated (code that ran twice for one key, from what the code itself
// appended to a file of its thread), and how long after the fault ended (worker gone,
// service back) the first and then every client succeeded. At the end, containers left
// by the dead worker (orphaned). The table goes to the test output and
// var/faults-report.txt.
//
// The gateway and the workers run on the settings scripts/start.sh writes, the
// deployment users run: PostgreSQL and Redis over their Unix sockets, where a stopped
// server is a missing socket file (ENOENT), not a refused port. Over TCP (scripts/test.sh's
// settings) with DRYDOCK_FAULTS_TRANSPORT=tcp; test/e2e/outages.e2e-spec.ts checks each
// outage's answers on both.
const TRANSPORT = process.env.DRYDOCK_FAULTS_TRANSPORT === 'tcp' ? 'tcp' : 'unix';
const CLIENTS = 4;
const PATIENCE_MS = 45_000;
const REQUEST_TIMEOUT_MS = 20_000;
const RETRYABLE = new Set([429, 502, 503, 504]);
// What an answered execution may end as under a fault (the run was on the killed worker
// or in the killed sandbox), and what a request may be refused with while a service is
// down: 503 only, never another 5xx (docs/api.md).
const ANSWERED_FAILURES = new Set(['killed']);
// HTTP statuses a retried request may have met: 503 (whatever its code, e.g.
// SERVICE_UNAVAILABLE, or NO_WORKER_AVAILABLE until the workers' heartbeats are back in a
// restarted Redis), 429, or no answer.
const REFUSALS = new Set(['503', '429', 'network']);

interface Phase {
  fault: string;
  attempted: number;
  ok: number;
  failed: Map<string, number>;
  retried: Map<string, number>;
  refusedWith: Set<string>;
  lost: number;
  answered: { id: string; status: string }[];
  injectedAt: number;
  firstOkAfter: number | null;
  okAfterBy: Set<number>;
  allOkAfter: number | null;
}

describe('Fault injection', () => {
  let gateway: GatewayProcess;
  const workers: WorkerProcess[] = [];
  const docker = new Docker({ socketPath: process.env.DOCKER_SOCKET ?? '/var/run/docker.sock' });
  const fast = { WORKER_HEARTBEAT_MS: '500', WORKER_HEARTBEAT_TTL_MS: '3000', WORKER_ORPHAN_SWEEP_MS: '1000', WORKER_POOL_SIZE: '1' };

  const settings: Record<string, string> = TRANSPORT === 'unix' ? unixSocketSettings() : {};

  beforeAll(async () => {
    await runMigrations(process.env.DATABASE_URL ?? 'postgres://drydock:drydock@127.0.0.1:5432/drydock_test');
    workers.push(await startWorkerProcess({ ...fast, ...settings }), await startWorkerProcess({ ...fast, ...settings }));
    gateway = await startGatewayProcess({ ...fast, ...settings });
  });

  afterAll(async () => {
    // Whatever happened, the services come back for the suites after this one.
    try {
      redis('start');
    } catch {
      /* already running */
    }
    try {
      postgres('start');
    } catch {
      /* already running */
    }
    await gateway?.stop();
    await Promise.allSettled(workers.map((w) => w.kill('SIGTERM')));
  });

  it('should lose nothing, run nothing twice and leave no orphan under each fault', async () => {
    const admin = new ApiClient(gateway.url, process.env.DRYDOCK_ADMIN_KEY!);
    const tenant = await admin.post('/admin/tenants', { name: 'faults', limits: { maxSessions: 20 } });
    const api = new ApiClient(gateway.url, tenant.body.apiKey);
    const threads = Array.from({ length: CLIENTS }, (_, i) => `fault-${i}`);
    const sessions: string[] = [];
    for (const threadId of threads) sessions.push((await api.createSession({ threadId })).id);
    const [doomed] = workers;

    let running = false;
    let phase: Phase;
    const sequence = new Array<number>(CLIENTS).fill(0);
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const attempt = async (client: number, key: string): Promise<ApiResponse | null> => {
      try {
        // The session as the client knows it; it moves on its own when its worker is
        // gone. A request unanswered after REQUEST_TIMEOUT_MS counts as no answer.
        const res = await fetch(`${gateway.url}/v1/sessions/${sessions[client]}/executions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${tenant.body.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ code: `open("/session/ran.log", "a").write("${key}\\n")\nprint("${key}")`, idempotencyKey: key }),
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        const text = await res.text();
        return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
      } catch {
        return null; // no answer at all (refused, reset, or too long)
      }
    };
    const loop = async (client: number) => {
      while (running) {
        const key = `c${client}-${sequence[client]++}`;
        phase.attempted++;
        const deadline = Date.now() + PATIENCE_MS;
        let answer: ApiResponse | null = null;
        for (let wait = 200; Date.now() < deadline; wait = Math.min(wait * 2, 2_000)) {
          const res = await attempt(client, key);
          if (res && !RETRYABLE.has(res.status)) {
            answer = res;
            break;
          }
          const code = res ? String(res.body?.error?.code ?? res.status) : 'network';
          phase.retried.set(code, (phase.retried.get(code) ?? 0) + 1);
          phase.refusedWith.add(res ? String(res.status) : 'network');
          const retryAfter = Number(res?.headers.get('retry-after') ?? 0) * 1000;
          await sleep(Math.min(Math.max(wait, retryAfter), 2_000));
        }
        if (!answer) {
          phase.lost++;
          continue;
        }
        if (answer.status === 200 && answer.body.status === 'ok') {
          phase.ok++;
          phase.answered.push({ id: answer.body.id, status: 'ok' });
          if (Date.now() >= phase.injectedAt) {
            phase.firstOkAfter ??= Date.now() - phase.injectedAt;
            phase.okAfterBy.add(client);
            if (phase.okAfterBy.size === CLIENTS) phase.allOkAfter ??= Date.now() - phase.injectedAt;
          }
        } else {
          const code = answer.status === 200 ? answer.body.status : String(answer.body?.error?.code ?? answer.status);
          phase.failed.set(code, (phase.failed.get(code) ?? 0) + 1);
          if (answer.status === 200) phase.answered.push({ id: answer.body.id, status: answer.body.status });
        }
      }
    };
    const run = async (fault: string, inject: () => Promise<void>): Promise<Phase> => {
      phase = { fault, attempted: 0, ok: 0, failed: new Map(), retried: new Map(), refusedWith: new Set(), lost: 0, answered: [], injectedAt: Infinity, firstOkAfter: null, okAfterBy: new Set(), allOkAfter: null };
      running = true;
      const clients = Array.from({ length: CLIENTS }, (_, i) => loop(i));
      await sleep(2_000);
      await inject();
      // Recovery is timed from the end of the fault: the worker gone, the service back.
      phase.injectedAt = Date.now();
      const until = Date.now() + 40_000;
      while (phase.allOkAfter === null && Date.now() < until) await sleep(200);
      await sleep(1_000);
      running = false;
      await Promise.all(clients);
      return phase;
    };

    const phases: Phase[] = [];
    phases.push(await run('worker SIGKILL', () => doomed!.kill('SIGKILL')));
    phases.push(
      await run('Redis restart', async () => {
        redis('stop');
        await sleep(2_000);
        redis('start');
      }),
    );
    phases.push(
      await run('PostgreSQL restart', async () => {
        postgres('stop');
        await sleep(2_000);
        postgres('start');
      }),
    );
    phases.push(
      await run('sandbox killed', async () => {
        const live = (await admin.get('/admin/sessions')).body.sessions as { id: string; containerId: string | null }[];
        const container = live.find((s) => s.id === sessions[0])?.containerId;
        if (container) execFileSync('docker', ['kill', container], { stdio: 'ignore' });
      }),
    );

    // Lost: an answered execution whose record is gone.
    for (const p of phases) {
      for (const answered of p.answered) {
        const record = await api.get(`/v1/executions/${answered.id}`);
        if (record.status !== 200 || record.body.status !== answered.status) p.lost++;
      }
    }
    // Duplicated: a key the code wrote to its thread's log more than once.
    const runs = new Map<string, number>();
    for (const threadId of threads) {
      const log = await api.request('GET', `/v1/threads/${threadId}/files/content?path=/ran.log`);
      for (const key of String(log.body ?? '').split('\n').filter(Boolean)) runs.set(key, (runs.get(key) ?? 0) + 1);
    }
    const duplicated = [...runs.values()].filter((n) => n > 1).length;
    // Orphaned: containers of the dead worker still there once the survivors swept.
    const leftOf = async () => (await docker.listContainers({ all: true, filters: { label: [`drydock.worker=${doomed!.id}`] } })).length;
    for (let i = 0; i < 50 && (await leftOf()) > 0; i++) await sleep(200);
    const orphaned = await leftOf();

    const codes = (m: Map<string, number>) => [...m].map(([c, n]) => `${c}×${n}`).join(' ') || '-';
    const transport =
      TRANSPORT === 'unix' ? `Unix sockets (${settings.DATABASE_URL!.replace(/:[^:@/]*@/, ':***@')}, ${settings.REDIS_URL})` : 'TCP (scripts/test.sh)';
    const lines = [
      `PostgreSQL and Redis over ${transport}`,
      'fault                attempted    ok  failed                      lost  retried (by code)                          first ok     all ok',
      '                                                                                   (after the fault ended)',
      ...phases.map((p) =>
        [
          p.fault.padEnd(20),
          String(p.attempted).padStart(9),
          String(p.ok).padStart(4),
          codes(p.failed).padEnd(26),
          String(p.lost).padStart(4),
          codes(p.retried).padEnd(41),
          `${p.firstOkAfter ?? '-'} ms`.padStart(9),
          `${p.allOkAfter ?? '-'} ms`.padStart(9),
        ].join('  '),
      ),
      `duplicated (code run twice for one key): ${duplicated} of ${runs.size} keys that ran; orphaned containers of the killed worker: ${orphaned}`,
    ];
    const report = lines.join('\n');
    console.log(`Fault injection\n${report}`);
    mkdirSync('var', { recursive: true });
    writeFileSync('var/faults-report.txt', `${report}\n`);

    for (const p of phases) {
      expect([p.fault, 'lost', p.lost]).toEqual([p.fault, 'lost', 0]);
      expect([p.fault, 'recovered', p.allOkAfter !== null]).toEqual([p.fault, 'recovered', true]);
      expect(p.ok).toBeGreaterThan(0);
      for (const code of p.failed.keys()) expect([p.fault, code, ANSWERED_FAILURES.has(code)]).toEqual([p.fault, code, true]);
      for (const status of p.refusedWith) expect([p.fault, status, REFUSALS.has(status)]).toEqual([p.fault, status, true]);
    }
    expect(duplicated).toBe(0);
    expect(orphaned).toBe(0);
  });
});
