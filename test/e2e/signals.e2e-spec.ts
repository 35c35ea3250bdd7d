import { Redis } from 'ioredis';
import { startGatewayProcess, type GatewayProcess } from './support/gateway-process.js';
import { startWorkerProcess, type WorkerProcess } from './support/worker-process.js';
import { pollUntil } from './support/until.js';
import { runMigrations } from '../../migrations/index.js';

// Which signals stop a gateway and a worker (SHUTDOWN_SIGNALS in @drydock/core). A
// diagnostic that listens to SIGUSR2 (Node's --heapsnapshot-signal=SIGUSR2,
// bench/agent/turn-trace.ts) must leave the process serving; SIGHUP stops it the orderly
// way (a worker leaves the registry), as SIGTERM does.
const MARK = 'diagnostic handled SIGUSR2';
// Stands in for a diagnostic: a handler of its own for SIGUSR2, and a line when it ran.
const DIAGNOSTIC = ['--import', `data:text/javascript,process.on('SIGUSR2', () => console.log(${JSON.stringify(MARK)}))`];

describe('Process signals', () => {
  let gateway: GatewayProcess | undefined;
  let worker: WorkerProcess | undefined;
  let redis: Redis;

  beforeAll(async () => {
    await runMigrations(process.env.DATABASE_URL ?? 'postgres://drydock:drydock@127.0.0.1:5432/drydock_test');
    redis = new Redis(process.env.REDIS_URL!);
  });

  afterAll(async () => {
    await gateway?.stop();
    await worker?.kill('SIGKILL');
    redis.disconnect();
  });

  it('should leave a gateway serving when a diagnostic takes SIGUSR2', async () => {
    gateway = await startGatewayProcess({}, DIAGNOSTIC);
    process.kill(gateway.pid, 'SIGUSR2');
    await pollUntil(() => gateway!.output().includes(MARK), 15_000, 100, 'the diagnostic');
    // A shutdown would have closed the port by now (it did within milliseconds).
    await new Promise((r) => setTimeout(r, 500));
    expect((await fetch(`${gateway.url}/health/live`)).status).toBe(200);
    await gateway.stop();
    gateway = undefined;
  });

  it('should leave a worker registered when a diagnostic takes SIGUSR2, and drain it on SIGHUP', async () => {
    worker = await startWorkerProcess({}, DIAGNOSTIC);
    const key = `drydock:worker:${worker.id}`;
    worker.child.kill('SIGUSR2');
    await pollUntil(() => worker!.output().includes(MARK), 15_000, 100, 'the diagnostic');
    // Longer than a drain of this worker takes (WORKER_DRAIN_TIMEOUT_MS is 1 s here): it
    // never announces one, and stays up.
    for (const deadline = Date.now() + 3000; Date.now() < deadline; ) {
      const info = JSON.parse((await redis.get(key)) ?? 'null') as { state?: string } | null;
      expect(info).not.toBeNull();
      expect(info!.state ?? 'active').toBe('active');
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(worker.child.exitCode).toBeNull();
    expect(worker.child.signalCode).toBeNull();

    // SIGHUP: the orderly way out, which deregisters (a process killed outright would
    // leave its key until the heartbeat's expiry).
    await worker.kill('SIGHUP');
    expect(await redis.exists(key)).toBe(0);
    worker = undefined;
  });
});
