import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@drydock/core';
import { PlatformMetrics } from '@drydock/metrics';
import { HostedSessionRegistry, WarmSandboxPool, WorkerHeartbeat } from '@drydock/session-host';

// The worker's operator port (WORKER_METRICS_PORT; none when 0): Prometheus text at
// /metrics, liveness at /health/live (the process answers) and readiness at /health/ready
// (active, and Docker answered its last heartbeat). No public API, no tenant data.
@Injectable()
export class OperatorServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Worker');
  private server: Server | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: PlatformMetrics,
    private readonly hosted: HostedSessionRegistry,
    private readonly pool: WarmSandboxPool,
    private readonly heartbeat: WorkerHeartbeat,
  ) {}

  // The port it listens on; null when it does not.
  get port(): number | null {
    return (this.server?.address() as AddressInfo | null)?.port ?? null;
  }

  async onApplicationBootstrap(): Promise<void> {
    this.metrics.onScrape(async () => {
      this.metrics.sessionsLive.set(this.hosted.size);
      const pools = this.pool.status;
      // Reset first: a template pool that went since the last scrape is not reported.
      this.metrics.sandboxesPooled.reset();
      this.metrics.sandboxesPooled.set({ pool: 'default' }, pools.ready);
      for (const pool of pools.templates ?? []) this.metrics.sandboxesPooled.set({ pool: pool.template }, pool.ready);
    });
    const { metricsPort, metricsHost } = this.config.worker;
    if (!metricsPort) return;
    this.server = createServer((req, res) => {
      const path = (req.url ?? '').split('?')[0];
      if (req.method !== 'GET') {
        res.writeHead(405, { allow: 'GET' }).end();
      } else if (path === '/metrics') {
        void this.metrics.render().then(
          ({ contentType, text }) => res.writeHead(200, { 'content-type': contentType }).end(text),
          (error: Error) => res.writeHead(500).end(error.message),
        );
      } else if (path === '/health/live') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok' }));
      } else if (path === '/health/ready') {
        const ready = this.heartbeat.state === 'active' && this.heartbeat.dockerHealthy;
        res
          .writeHead(ready ? 200 : 503, { 'content-type': 'application/json' })
          .end(JSON.stringify({ status: ready ? 'ok' : 'error', state: this.heartbeat.state, dockerHealthy: this.heartbeat.dockerHealthy }));
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(metricsPort, metricsHost, () => resolve());
    });
    this.logger.log(`operator port on ${metricsHost}:${this.port} (/metrics, /health/live, /health/ready)`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
