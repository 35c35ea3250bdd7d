import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

// The stages of one execution on the worker, in order.
export type ExecutionStage = 'queue_wait' | 'file_push' | 'run' | 'file_pull' | 'ingest';

const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

// Every Prometheus metric of one process (gateway or worker), on a registry of its own
// (two apps in one process, as in tests, keep theirs apart). Labels never carry code,
// paths, keys or session ids: tenant ids, statuses, stages, routes and queue names only.
@Injectable()
export class PlatformMetrics {
  readonly registry = new Registry();

  readonly executions = new Counter({
    name: 'drydock_executions_total',
    help: 'Executions answered, by tenant and status (ok, error, timeout, memory, killed).',
    labelNames: ['tenant', 'status'],
    registers: [this.registry],
  });

  readonly stageSeconds = new Histogram({
    name: 'drydock_execution_stage_seconds',
    help: 'Time of each stage of an execution on the worker: queue_wait, file_push, run, file_pull, ingest.',
    labelNames: ['stage'],
    buckets: SECONDS,
    registers: [this.registry],
  });

  readonly httpSeconds = new Histogram({
    name: 'drydock_http_request_duration_seconds',
    help: 'Gateway requests, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status'],
    buckets: SECONDS,
    registers: [this.registry],
  });

  readonly batchItems = new Counter({
    name: 'drydock_batch_items_total',
    help: 'Batch items finished on this worker, by tenant and status.',
    labelNames: ['tenant', 'status'],
    registers: [this.registry],
  });

  readonly sessionsLive = new Gauge({ name: 'drydock_sessions_live', help: 'Sessions this worker hosts.', registers: [this.registry] });

  readonly sandboxesPooled = new Gauge({
    name: 'drydock_sandboxes_pooled',
    help: "Started sandboxes waiting in this worker's warm pools, by pool (default, or a template's name:version).",
    labelNames: ['pool'],
    registers: [this.registry],
  });

  readonly queueJobs = new Gauge({
    name: 'drydock_queue_jobs',
    help: 'Jobs in the platform queues, by queue and state (read when scraped).',
    labelNames: ['queue', 'state'],
    registers: [this.registry],
  });

  readonly tenantBytes = new Gauge({
    name: 'drydock_tenant_stored_bytes',
    help: 'Bytes each tenant stores, by kind (thread_files, artifacts; read when scraped).',
    labelNames: ['tenant', 'kind'],
    registers: [this.registry],
  });

  readonly terminalsOpened = new Counter({
    name: 'drydock_terminals_opened_total',
    help: 'Terminals (GET /v1/sessions/:id/pty) opened in sandboxes of this worker.',
    registers: [this.registry],
  });

  readonly egressConnections = new Counter({
    name: 'drydock_egress_connections_total',
    help: 'Connection attempts through the egress proxy of this worker, by verdict (allowed, denied).',
    labelNames: ['verdict'],
    registers: [this.registry],
  });

  readonly egressBytes = new Counter({
    name: 'drydock_egress_bytes_total',
    help: 'Bytes through the egress proxy of this worker: in (hosts to sandboxes), out (sandboxes to hosts).',
    labelNames: ['direction'],
    registers: [this.registry],
  });

  egressConnection(verdict: 'allowed' | 'denied', bytesIn: number, bytesOut: number): void {
    this.egressConnections.inc({ verdict });
    if (bytesIn) this.egressBytes.inc({ direction: 'in' }, bytesIn);
    if (bytesOut) this.egressBytes.inc({ direction: 'out' }, bytesOut);
  }

  terminalOpened(): void {
    this.terminalsOpened.inc();
  }

  private readonly collectors: (() => Promise<void>)[] = [];

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'drydock_' });
  }

  // Runs before each scrape (queue depths, bytes per tenant), each bounded by its own
  // failure: a collector that fails leaves its gauges as they were.
  onScrape(collect: () => Promise<void>): void {
    this.collectors.push(collect);
  }

  async render(): Promise<{ contentType: string; text: string }> {
    await Promise.allSettled(this.collectors.map((c) => c()));
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}
