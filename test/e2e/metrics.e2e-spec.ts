import { createServer } from 'node:net';
import { startPlatform, type Platform } from './support/platform.js';

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

// Prometheus metrics: the gateway's /metrics (admin key) counts what was answered, per
// tenant and status; the worker's operator port shows stage latencies and its sessions,
// and answers its probes.
describe('Metrics', () => {
  let platform: Platform;
  let workerPort: number;

  beforeAll(async () => {
    workerPort = await freePort();
    platform = await startPlatform({ WORKER_METRICS_PORT: String(workerPort) });
  });

  afterAll(async () => {
    await platform?.close();
  });

  // The value of one sample line, `name{labels} value`.
  const sample = (text: string, name: string, labels: Record<string, string>) => {
    const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
    const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && wanted.every((w) => l.includes(w)));
    return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
  };

  it('should count a scripted mix of executions per tenant and status, and time their stages on the worker', async () => {
    const [a, b] = [await platform.newTenant(), await platform.newTenant()];
    const [sa, sb] = [await a.createSession({ threadId: 'm' }), await b.createSession({ threadId: 'm' })];
    for (const code of ['print(1)', 'print(2)', 'raise ValueError("no")']) await a.execute(sa.id, code);
    await b.execute(sb.id, 'x = 1');
    expect((await b.execute(sb.id, 'import time\ntime.sleep(5)', { timeoutMs: 300 })).body.status).toBe('timeout');
    await a.request('PUT', '/v1/threads/m/files/content?path=/data.txt', { body: 'x'.repeat(700), headers: { 'content-type': 'text/plain' } });

    expect((await platform.anonymous.get('/metrics')).status).toBe(401);
    const res = await fetch(`${platform.url}/metrics`, { headers: { authorization: `Bearer ${process.env.DRYDOCK_ADMIN_KEY}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const gateway = await res.text();
    const executions = (tenant: string, status: string) => sample(gateway, 'drydock_executions_total', { tenant, status });
    expect([executions(a.tenantId, 'ok'), executions(a.tenantId, 'error'), executions(b.tenantId, 'ok'), executions(b.tenantId, 'timeout')]).toEqual([2, 1, 1, 1]);
    expect(executions(b.tenantId, 'error')).toBe(0);
    expect(sample(gateway, 'drydock_http_request_duration_seconds_count', { route: '/v1/sessions/:id/executions', status: '200' })).toBeGreaterThanOrEqual(5);
    expect(sample(gateway, 'drydock_tenant_stored_bytes', { tenant: a.tenantId, kind: 'thread_files' })).toBe(700);
    expect(sample(gateway, 'drydock_queue_jobs', { queue: `drydock-worker-${platform.workerId}`, state: 'waiting' })).toBe(0);
    expect(gateway).toContain('drydock_process_resident_memory_bytes');

    const worker = await (await fetch(`http://127.0.0.1:${workerPort}/metrics`)).text();
    for (const stage of ['queue_wait', 'file_push', 'run', 'file_pull', 'ingest']) {
      expect([stage, sample(worker, 'drydock_execution_stage_seconds_count', { stage }) >= 5]).toEqual([stage, true]);
    }
    expect(Number(/^drydock_sessions_live (\d+)/m.exec(worker)?.[1])).toBeGreaterThanOrEqual(2);
    expect((await fetch(`http://127.0.0.1:${workerPort}/health/live`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${workerPort}/health/ready`)).status).toBe(200);
  });
});
