import { randomBytes } from 'node:crypto';
import { ApiClient } from './support/api-client.js';
import { startGatewayProcess, type GatewayProcess } from './support/gateway-process.js';
import { startWorkerProcess, type WorkerProcess } from './support/worker-process.js';
import { runMigrations } from '../../migrations/index.js';

// The logs of a gateway and a worker run as processes (as scripts/start.sh runs them):
// one JSON object per line, one request id from the gateway's request to the worker's
// job, and not one secret (API key, admin key, signing secret, database credentials,
// a signed link's signature) anywhere.
// On SIGUSR2 a process adds an 11th listener to an EventEmitter: Node's own
// MaxListenersExceededWarning, which Node prints as plain text unless the app logs it.
const WARN_ON_SIGNAL = [
  '--import',
  `data:text/javascript,process.on('SIGUSR2', async () => { const { EventEmitter } = await import('node:events'); const e = new EventEmitter(); for (let i = 0; i < 11; i++) e.on('tick', () => {}); })`,
];
// Not jest's --no-warnings, which would take Node's printer off and hide the defect.
const WITH_NODE_WARNINGS = { NODE_OPTIONS: '' };

describe('Structured logs', () => {
  let gateway: GatewayProcess;
  let worker: WorkerProcess;

  beforeAll(async () => {
    await runMigrations(process.env.DATABASE_URL ?? 'postgres://drydock:drydock@127.0.0.1:5432/drydock_test');
    worker = await startWorkerProcess({ LOG_LEVEL: 'debug', ...WITH_NODE_WARNINGS }, WARN_ON_SIGNAL);
    gateway = await startGatewayProcess({ LOG_LEVEL: 'debug', ...WITH_NODE_WARNINGS }, WARN_ON_SIGNAL);
  });

  afterAll(async () => {
    await gateway?.stop();
    await worker?.kill('SIGTERM');
  });

  it('should write JSON lines that carry the request id to the worker and no secret', async () => {
    const admin = new ApiClient(gateway.url, process.env.DRYDOCK_ADMIN_KEY!);
    const created = await admin.post('/admin/tenants', { name: 'logs' });
    const apiKey: string = created.body.apiKey;
    const api = new ApiClient(gateway.url, apiKey);
    // Non-default memory: the session starts on the worker process, not from a pool.
    const session = await api.post('/v1/sessions', { threadId: 'logged', limits: { memoryMb: 300 } });
    expect(session.status).toBe(201);
    const requestId = `log-check-${randomBytes(4).toString('hex')}`;
    const run = await api.request('POST', `/v1/sessions/${session.body.id}/executions`, {
      json: { code: 'open("/session/artifacts/r.txt", "w").write("r")\nprint("logged")' },
      headers: { 'x-request-id': requestId },
    });
    expect(run.body).toMatchObject({ status: 'ok', stdout: 'logged\n' });
    expect(run.headers.get('x-request-id')).toBe(requestId);
    const link = await api.post(`/v1/artifacts/${run.body.artifacts[0].id}/url`, {});
    const signature = new URL(link.body.url, gateway.url).searchParams.get('signature')!;
    expect((await fetch(new URL(link.body.url, gateway.url))).status).toBe(200);
    expect((await new ApiClient(gateway.url, 'ddk_not-a-key-of-anyone').get('/v1/sessions')).status).toBe(401);
    // Give the worker's debug line for the job its moment to be written.
    await new Promise((r) => setTimeout(r, 300));

    const lines = (text: string) => text.split('\n').filter((l) => l.trim() !== '');
    const parse = (line: string) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`not a JSON log line: ${line}`);
      }
    };
    const gatewayLines = lines(gateway.output()).map(parse);
    const workerLines = lines(worker.output()).map(parse);
    for (const line of [...gatewayLines, ...workerLines]) expect(line).toMatchObject({ level: expect.any(String), time: expect.any(String), service: expect.any(String) });

    // One request id, from the gateway's request to the worker's job.
    const ofRequest = (all: Record<string, unknown>[]) => all.filter((l) => l.requestId === requestId);
    expect(ofRequest(gatewayLines)).toContainEqual(expect.objectContaining({ service: 'gateway', tenantId: created.body.id, executionId: run.body.id }));
    expect(ofRequest(workerLines)).toContainEqual(
      expect.objectContaining({ service: 'worker', workerId: worker.id, tenantId: created.body.id, sessionId: session.body.id, executionId: run.body.id }),
    );

    const everything = gateway.output() + worker.output();
    for (const secret of [apiKey, process.env.DRYDOCK_ADMIN_KEY!, process.env.ARTIFACTS_SIGNING_SECRET!, signature, process.env.DATABASE_URL!]) {
      expect(everything.includes(secret)).toBe(false);
    }
  });

  it("should write Node's own warnings as JSON lines of the log", async () => {
    for (const [name, proc] of [['gateway', gateway], ['worker', worker]] as const) {
      process.kill('pid' in proc ? proc.pid : proc.child.pid!, 'SIGUSR2');
      const deadline = Date.now() + 10_000;
      while (!proc.output().includes('MaxListenersExceededWarning') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const lines = proc
        .output()
        .split('\n')
        .filter((l) => l.trim() !== '');
      const notJson = lines.filter((line) => {
        try {
          JSON.parse(line);
          return false;
        } catch {
          return true;
        }
      });
      expect([name, notJson]).toEqual([name, []]);
      expect(lines.map((l) => JSON.parse(l))).toContainEqual(
        expect.objectContaining({
          level: 'warn',
          service: name,
          warning: expect.objectContaining({ name: 'MaxListenersExceededWarning', stack: expect.any(String) }),
          msg: expect.stringContaining('MaxListenersExceededWarning: Possible EventEmitter memory leak detected'),
        }),
      );
    }
  });
});
