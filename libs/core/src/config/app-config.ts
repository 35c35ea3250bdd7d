import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { z } from 'zod';

// Every setting Drydock reads from the environment, validated once at boot. A bad or
// missing value stops the process with a message naming the variable.
const int = (def: number) => z.coerce.number().int().positive().default(def);

const limitsSchema = z.object({
  memoryMb: int(512),
  cpus: z.coerce.number().positive().default(1),
  timeoutMs: int(30_000),
  pids: int(128),
  sessionDiskMb: int(256),
  tmpDiskMb: int(64),
  maxOutputBytes: int(1024 * 1024),
});

export const configSchema = z.object({
  nodeEnv: z.enum(['development', 'test', 'production']).default('development'),
  // JSON logs from this level up (LOG_LEVEL); `silent` logs nothing.
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  databaseUrl: z.string().url(),
  redisUrl: z.string().url(),
  gateway: z.object({
    host: z.string().default('0.0.0.0'),
    port: z.coerce.number().int().min(0).max(65535).default(8080),
    maxBodyBytes: int(2 * 1024 * 1024),
    // How long a synchronous execution request waits for its result.
    maxWaitMs: int(15 * 60_000),
    // How long a verified API key is trusted without asking the database again. A
    // revoked key stops working on every gateway within this time (0 disables it).
    authCacheTtlMs: z.coerce.number().int().min(0).max(60_000).default(1_000),
  }),
  // CORS_ORIGINS: the origins whose pages may call the gateway from a browser
  // ("https://app.example.com,http://localhost:5173"); none by default (no CORS headers).
  cors: z.object({
    origins: z
      .string()
      .optional()
      .transform((value, ctx) => parseCorsOrigins(value, ctx)),
  }),
  adminKey: z.string().min(24, 'DRYDOCK_ADMIN_KEY must be at least 24 characters'),
  worker: z.object({
    id: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'WORKER_ID may hold letters, digits, _ . - (1-64)'),
    capacity: int(50),
    concurrency: int(32),
    heartbeatMs: int(2_000),
    heartbeatTtlMs: int(10_000),
    sessionIdleMs: int(15 * 60_000),
    // What an idle session comes to (docs/sessions.md): `hibernate` checkpoints it after
    // sessionHibernateAfterMs where its tier can (gVisor), keeping its memory, and ends it
    // as `end` does elsewhere; `end` ends it after sessionIdleMs.
    sessionIdleAction: z.enum(['hibernate', 'end']).default('hibernate'),
    sessionHibernateAfterMs: int(5 * 60_000),
    // A hibernated session unused this long ends, its checkpoint deleted.
    hibernatedRetentionMs: z.coerce.number().int().min(60_000).default(7 * 24 * 60 * 60_000),
    reaperIntervalMs: int(30_000),
    interruptGraceMs: int(1_000),
    // A drain (SIGTERM or POST /admin/workers/:id/drain): how long running executions and
    // batch items may finish before the worker's sandboxes go (they then end killed, and
    // batch items run again elsewhere).
    drainTimeoutMs: z.coerce.number().int().min(0).default(60_000),
    // After handing its sessions back, how long a draining worker keeps answering jobs
    // still sent to it (SESSION_MOVED, so their gateway resends them): gateways read a
    // session's worker per request and cache live workers for a second.
    drainSettleMs: z.coerce.number().int().min(0).default(2_500),
    // An execution that has not started this long after it was submitted is not run
    // (recorded killed, ExecutionExpired): its run-once claim need only last this long
    // (plus its run) instead of for good.
    executionStartDeadlineMs: z.coerce.number().int().min(60_000).default(60 * 60_000),
    // Started sandboxes (REPL ready, default limits, no tenant's data) kept for new
    // sessions, so a session start takes one instead of starting a container; 0: off.
    poolSize: z.coerce.number().int().min(0).max(100).default(2),
    // How often a worker removes, from its Docker engine, the containers of workers that
    // are gone (absent from the registry, containers older than the heartbeat TTL); 0: off.
    orphanSweepMs: z.coerce.number().int().min(0).default(30_000),
    // The worker's operator port: Prometheus /metrics and /health/live, /health/ready.
    // 0: none. It serves no public API; bind it where only Prometheus reaches it.
    metricsPort: z.coerce.number().int().min(0).max(65535).default(0),
    metricsHost: z.string().default('127.0.0.1'),
  }),
  // Per-tenant defaults (tenant limits `requestsPerMinute`, `concurrentExecutions`
  // override them), enforced through Redis across gateways.
  rateLimits: z.object({
    requestsPerMinute: int(60_000),
    concurrentExecutions: int(64),
  }),
  vfs: z.object({
    // Largest single file in a thread's filesystem.
    maxFileBytes: int(50 * 1024 * 1024),
    // Default total bytes of all a tenant's thread files (tenant limit `vfsBytes` overrides).
    maxTenantBytes: int(1024 * 1024 * 1024),
    // Largest tar body of a bulk upload (POST .../files/archive), counted after gunzip:
    // the gateway holds the files of one archive in memory until they are written.
    maxArchiveBytes: int(256 * 1024 * 1024),
    // Entries (files and directories) of one bulk upload: a 1.4 MB .tar.gz can hold
    // 200,000 empty files, each a row written and a file pushed into the next sandbox.
    maxArchiveEntries: int(20_000),
    // Default live files of one thread (tenant limit `maxFilesPerThread` overrides): a
    // session starts with all of them pushed into /session, and the sandbox tracks at
    // most 100,000 entries of /session per run (its change report).
    maxFilesPerThread: int(50_000),
  }),
  // Snapshots of gvisor sessions (docs/sessions.md): per-tenant quotas (tenant limits
  // `snapshotCount`/`snapshotBytes` override them) and how long one is kept by default.
  snapshots: z.object({
    maxCountPerTenant: int(20),
    maxBytesPerTenant: int(20 * 1024 * 1024 * 1024),
    retentionSeconds: int(7 * 24 * 3600),
  }),
  artifacts: z.object({
    // Where the local blob store keeps artifact bytes (shared by gateways and workers).
    dir: z.string().min(1).default('var/artifacts'),
    // Largest single artifact; a bigger file is refused while it streams.
    maxFileBytes: int(512 * 1024 * 1024),
    // HMAC key of signed download URLs; the gateway refuses to start without one.
    // Rotating it revokes every URL signed with the old one.
    signingSecret: z.string().min(32, 'ARTIFACTS_SIGNING_SECRET must be at least 32 characters').optional(),
    urlDefaultTtlSeconds: int(3600),
    urlMaxTtlSeconds: int(7 * 24 * 3600),
    // Default per-tenant quotas (tenant limits `artifactCount`/`artifactBytes` override).
    maxCountPerTenant: int(100_000),
    maxBytesPerTenant: int(10 * 1024 * 1024 * 1024),
    // How long an artifact is kept (tenant limit `artifactRetentionSeconds` overrides);
    // 0 keeps artifacts until they are deleted.
    retentionSeconds: z.coerce.number().int().min(0).default(30 * 24 * 3600),
    // How often a worker deletes expired artifacts and collects their content.
    expiryIntervalMs: int(5 * 60_000),
  }),
  docker: z.object({
    socketPath: z.string().default('/var/run/docker.sock'),
    sandboxImage: z.string().default('drydock/sandbox:latest'),
    // Host folder under which `storage: "bind"` sessions keep /session (one folder per
    // session). Unset: bind storage is refused. Must be on the Docker host's disk.
    sessionBindDir: z.string().min(1).optional(),
    // Host folder for the sandboxes' socket channels (one folder per container): the
    // worker then talks to each supervisor over a Unix socket instead of the attached
    // stdin/stdout, which dockerd and containerd-shim copy (decision 010). It must be
    // on the Docker host's disk, at the same path for the worker. Unset: attached streams
    // (a remote Docker engine, for instance).
    channelDir: z.string().min(1).optional(),
    // The OCI runtime sandbox containers run under (e.g. gVisor's "runsc"); unset:
    // Docker's default (runc). The worker refuses to start when Docker does not know it.
    runtime: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'SANDBOX_RUNTIME must be a runtime name known to Docker').optional(),
    // The Docker runtime of the `gvisor` tier (gVisor's runsc, registered with the engine:
    // scripts/start.sh --gvisor); unset: the tier is not offered. Only its sandboxes can
    // hibernate and be snapshotted (decision 018).
    gvisorRuntime: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'SANDBOX_GVISOR_RUNTIME must be a runtime name known to Docker').optional(),
    // The tier of sessions that ask for none (a tenant's limits.tiers may say otherwise).
    defaultTier: z.enum(['runc', 'gvisor']).default('runc'),
    // A JSON seccomp profile replacing the built-in one (docs/security.md); "unconfined"
    // is refused: no sandbox runs without a profile.
    seccompProfile: z
      .string()
      .min(1)
      .refine((v) => v !== 'unconfined', 'SANDBOX_SECCOMP_PROFILE cannot be "unconfined": sandboxes always run under a profile')
      .optional(),
    // Python modules the sandbox's zygote imports once, before any user code, so every
    // interpreter it forks (a recycled batch sandbox, a kernel restarted after a timeout)
    // starts with them loaded. Empty: none.
    preloadModules: z
      .string()
      .default('')
      .transform((v) => v.split(',').map((m) => m.trim()).filter(Boolean))
      .pipe(z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/, 'SANDBOX_PRELOAD_MODULES is a comma-separated list of Python module names')).max(20)),
  }),
  datasets: z.object({
    // The dataset registry: shared/<name>/ for every tenant, tenants/<tenantId>/<name>/
    // for one. Unset: sessions asking for datasets are refused.
    dir: z.string().min(1).optional(),
    // Largest dataset a session may stage into /session/data.
    maxStagedBytes: int(256 * 1024 * 1024),
  }),
  templates: z.object({
    // The OCI registry (Distribution v2) template images are pushed to and every worker
    // pulls from, as host:port (docs/templates.md). Unset: templates are refused.
    registry: z
      .string()
      .regex(/^[A-Za-z0-9.-]+(:[0-9]{1,5})?$/, 'TEMPLATE_REGISTRY is host:port, e.g. 127.0.0.1:5000')
      .optional(),
    // Where the worker itself reaches the registry's HTTP API (to delete a deleted
    // template's images); unset: http://<TEMPLATE_REGISTRY>. Differs when the worker runs
    // in a container and the engine reaches the registry on the host's loopback.
    registryApiUrl: z.string().url().optional(),
    // Bounds of one build: its wall-clock time, the Dockerfile and the context files
    // sent with it, and what its steps may add to the platform's image.
    buildTimeoutMs: int(15 * 60_000),
    maxDockerfileBytes: int(64 * 1024),
    maxContextFiles: int(100),
    maxContextBytes: int(1024 * 1024),
    maxAddedImageMb: int(4096),
    // Memory of a build's steps (the build container's limit).
    buildMemoryMb: int(4096),
    // The Docker network a build's RUN steps use: its own bridge (created when missing,
    // no traffic between its containers), or "none" for builds without a network. Until
    // egress control (docs/templates.md), the host firewalls what it may reach.
    buildNetwork: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'TEMPLATE_BUILD_NETWORK is a Docker network name, or "none"').default('drydock-builds'),
    // Builds one worker runs at once (0: this worker builds none).
    workerConcurrency: z.coerce.number().int().min(0).max(8).default(1),
  }),
  egress: z.object({
    // Private ranges every tenant's sessions may reach besides public addresses
    // ("10.1.0.0/16,fd00::/8"); a tenant's limits.network.ranges add to these.
    allowedRanges: z
      .string()
      .optional()
      .transform((value) => (value ?? '').split(',').map((r) => r.trim()).filter(Boolean)),
    // Names the proxy resolves to fixed addresses before DNS ("index.test=127.0.0.1,..."),
    // like curl's --resolve: for names DNS does not know (tests, split horizons).
    resolve: z
      .string()
      .optional()
      .transform((value, ctx) => parseResolveOverrides(value, ctx)),
    // host:port pairs no sandbox may reach whatever its policy, besides the platform's own
    // PostgreSQL, Redis, registry and gateway (always refused).
    deny: z
      .string()
      .optional()
      .transform((value) => (value ?? '').split(',').map((r) => r.trim()).filter(Boolean)),
    // Time to resolve and connect to an upstream, and to read a tunnel's TLS ClientHello.
    connectTimeoutMs: int(10_000),
    // Connection log rows are deleted this long after the connection (0: kept).
    logRetentionDays: z.coerce.number().int().min(0).default(30),
  }),
  batches: z.object({
    // Items per batch, and the largest request body a batch may come in (NDJSON bodies
    // are streamed; a JSON body is parsed whole, up to this size).
    maxItems: int(100_000),
    maxBodyBytes: int(256 * 1024 * 1024),
    // Per item: its code, and the files put in /session before it runs (count and bytes).
    maxCodeBytes: int(1024 * 1024),
    maxItemFiles: int(100),
    maxItemFileBytes: int(10 * 1024 * 1024),
    // Items of one tenant running at once (tenant limit `batchConcurrency` overrides), and
    // a batch's own `concurrency` when it names none.
    tenantConcurrency: int(4),
    defaultConcurrency: int(4),
    // Batch item slots of one worker: separate from its interactive sessions, so batch
    // items never wait for sessions nor delay them.
    workerConcurrency: z.coerce.number().int().min(0).default(4),
    // Keep an item's sandbox, recycled and checked, for the next item of the same batch on
    // this worker (false: a new container for every item).
    recycleSandboxes: z
      .enum(['true', 'false'])
      .default('true')
      .transform((v) => v === 'true'),
    // Runs of one item before it ends `killed` (a worker lost mid-item counts as one).
    maxAttempts: int(3),
    // How long a worker's hold on an item lasts without renewal; a worker killed mid-item
    // gives its items back after this (BullMQ lock duration and stalled-job check).
    lockMs: int(30_000),
    // Finished batches and their items are deleted this long after they finish (0: kept).
    retentionSeconds: z.coerce.number().int().min(0).default(7 * 24 * 3600),
    // How often a worker deletes expired batches and repairs items a crash left behind.
    maintenanceIntervalMs: int(60_000),
  }),
  agent: z.object({
    // An OpenAI-compatible chat completions endpoint (OpenAI, vLLM, Ollama, LiteLLM...).
    // Unset: the agent endpoints answer 503 MODEL_NOT_CONFIGURED; the rest works.
    modelBaseUrl: z.string().url().optional(),
    modelApiKey: z.string().min(1).optional(),
    // The model used when an agent definition says "default" (and by the default agent).
    model: z.string().min(1).optional(),
    modelTimeoutMs: int(120_000),
    // Tool results longer than this many characters are saved to /large_tool_results/.
    evictionThresholdChars: int(80_000),
    // At most this many evicted results are kept per thread (the oldest go first).
    maxEvictedResults: int(50),
    // Model/tool round trips per run before the run stops (LangGraph recursion limit).
    maxSteps: int(50),
    // When a run's conversation state is written: "exit" once when the run ends (a run
    // that crashes leaves the thread as it was before it), "async"/"sync" after every
    // step as well (a crash keeps the steps done; each costs a checkpoint write).
    checkpointDurability: z.enum(['exit', 'async', 'sync']).default('exit'),
    // Threads whose latest checkpoint the gateway keeps in memory, so a run on a busy
    // thread loads it with one id lookup instead of reading and reviving every message.
    // 0 turns the cache off.
    checkpointCacheThreads: z.coerce.number().int().min(0).default(500),
    // A cached thread not used for this long leaves memory, so what another gateway
    // deleted (a thread, a tenant) is not kept here past it. 0: kept until pushed out.
    checkpointCacheIdleMs: z.coerce.number().int().min(0).default(900_000),
    // Host folders agent definitions may route to by name ("name=/abs/path,...").
    filesystemRoots: z
      .string()
      .optional()
      .transform((value, ctx) => parseFilesystemRoots(value, ctx)),
  }),
  // Defaults applied when neither caller nor tenant says otherwise.
  defaultLimits: limitsSchema,
  // Platform ceilings: no tenant limit can exceed these.
  maxLimits: z.object({
    memoryMb: int(8192),
    cpus: z.coerce.number().positive().default(4),
    timeoutMs: int(60 * 60_000),
    pids: int(1024),
    sessionDiskMb: int(4096),
    tmpDiskMb: int(1024),
    maxOutputBytes: int(4 * 1024 * 1024),
  }),
});

export type AppConfig = z.infer<typeof configSchema>;
export type SandboxLimits = z.infer<typeof limitsSchema>;

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const ENV_NAMES: Record<string, string> = {
  databaseUrl: 'DATABASE_URL',
  logLevel: 'LOG_LEVEL',
  redisUrl: 'REDIS_URL',
  adminKey: 'DRYDOCK_ADMIN_KEY',
  'worker.id': 'WORKER_ID',
  'artifacts.signingSecret': 'ARTIFACTS_SIGNING_SECRET',
  'agent.modelBaseUrl': 'AGENT_MODEL_BASE_URL',
  'agent.filesystemRoots': 'AGENT_FILESYSTEM_ROOTS',
  'agent.checkpointCacheThreads': 'AGENT_CHECKPOINT_CACHE_THREADS',
  'agent.checkpointCacheIdleMs': 'AGENT_CHECKPOINT_CACHE_IDLE_MS',
  'docker.channelDir': 'SANDBOX_CHANNEL_DIR',
  'docker.runtime': 'SANDBOX_RUNTIME',
  'docker.gvisorRuntime': 'SANDBOX_GVISOR_RUNTIME',
  'docker.defaultTier': 'SANDBOX_DEFAULT_TIER',
  'worker.sessionIdleAction': 'SESSION_IDLE_ACTION',
  'snapshots.maxCountPerTenant': 'SNAPSHOT_MAX_COUNT_PER_TENANT',
  'snapshots.maxBytesPerTenant': 'SNAPSHOT_MAX_BYTES_PER_TENANT',
  'snapshots.retentionSeconds': 'SNAPSHOT_RETENTION_S',
  'worker.sessionHibernateAfterMs': 'SESSION_HIBERNATE_AFTER_MS',
  'worker.hibernatedRetentionMs': 'SESSION_HIBERNATED_RETENTION_MS',
  'docker.seccompProfile': 'SANDBOX_SECCOMP_PROFILE',
  'docker.preloadModules': 'SANDBOX_PRELOAD_MODULES',
  'templates.registry': 'TEMPLATE_REGISTRY',
  'egress.resolve': 'EGRESS_RESOLVE',
  'cors.origins': 'CORS_ORIGINS',
};

// SANDBOX_RUNTIME=runsc (before tiers, every sandbox under gVisor) reads as what it
// meant: the gvisor tier, and every session on it by default.
function sandboxRuntimes(env: NodeJS.ProcessEnv): { runtime?: string; gvisorRuntime?: string; defaultTier?: string } {
  const runtime = env.SANDBOX_RUNTIME || undefined;
  const gvisorRuntime = env.SANDBOX_GVISOR_RUNTIME || undefined;
  if (runtime === 'runsc' && !gvisorRuntime) {
    return { gvisorRuntime: runtime, defaultTier: env.SANDBOX_DEFAULT_TIER || 'gvisor' };
  }
  return { runtime, gvisorRuntime, defaultTier: env.SANDBOX_DEFAULT_TIER || undefined };
}

// "https://app.example.com, http://localhost:5173" -> the two origins as a browser sends
// them in `Origin` (lower case, without a default port), matched exactly.
function parseCorsOrigins(value: string | undefined, ctx: z.RefinementCtx): string[] {
  const origins: string[] = [];
  for (const entry of (value ?? '').split(',').map((e) => e.trim()).filter(Boolean)) {
    const url = URL.canParse(entry) ? new URL(entry) : null;
    if (!url || !/^https?:$/.test(url.protocol) || url.pathname !== '/' || url.search || url.hash || url.username || url.password) {
      ctx.addIssue({ code: 'custom', message: `"${entry}" is not an origin (http(s)://host[:port], without a path)` });
      continue;
    }
    origins.push(url.origin);
  }
  return origins;
}

// "index.test=127.0.0.1,api.test=10.0.0.5|10.0.0.6" -> { 'index.test': ['127.0.0.1'], ... }
function parseResolveOverrides(value: string | undefined, ctx: z.RefinementCtx): Record<string, string[]> {
  const names: Record<string, string[]> = {};
  for (const entry of (value ?? '').split(',').map((e) => e.trim()).filter(Boolean)) {
    const match = /^([a-z0-9][a-z0-9.-]{0,252})=([0-9a-f.:|]+)$/i.exec(entry);
    const addresses = match ? match[2]!.split('|').filter(Boolean) : [];
    if (!match || addresses.length === 0 || addresses.some((a) => !isIP(a))) {
      ctx.addIssue({ code: 'custom', message: `"${entry}" is not name=address (addresses joined with "|")` });
      continue;
    }
    names[match[1]!.toLowerCase().replace(/\.$/, '')] = addresses;
  }
  return names;
}

// "datasets=/srv/data,notes=/srv/notes" -> { datasets: '/srv/data', notes: '/srv/notes' }
function parseFilesystemRoots(value: string | undefined, ctx: z.RefinementCtx): Record<string, string> {
  const roots: Record<string, string> = {};
  for (const entry of (value ?? '').split(',').map((e) => e.trim()).filter(Boolean)) {
    const match = /^([a-z0-9][a-z0-9_-]{0,63})=(\/.*)$/.exec(entry);
    if (!match || roots[match[1]!] !== undefined) {
      ctx.addIssue({ code: 'custom', message: `"${entry}" is not name=/absolute/path (names unique, lowercase)` });
      continue;
    }
    roots[match[1]!] = match[2]!;
  }
  return roots;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const raw = {
    nodeEnv: env.NODE_ENV,
    logLevel: env.LOG_LEVEL || undefined,
    databaseUrl: env.DATABASE_URL,
    redisUrl: env.REDIS_URL,
    gateway: {
      host: env.GATEWAY_HOST,
      port: env.GATEWAY_PORT,
      maxBodyBytes: env.GATEWAY_MAX_BODY_BYTES,
      maxWaitMs: env.GATEWAY_MAX_WAIT_MS,
      authCacheTtlMs: env.AUTH_CACHE_TTL_MS,
    },
    cors: { origins: env.CORS_ORIGINS || undefined },
    adminKey: env.DRYDOCK_ADMIN_KEY,
    worker: {
      id: env.WORKER_ID ?? hostname().replace(/[^A-Za-z0-9_.-]/g, '-').slice(0, 64),
      capacity: env.WORKER_CAPACITY,
      concurrency: env.WORKER_CONCURRENCY,
      heartbeatMs: env.WORKER_HEARTBEAT_MS,
      heartbeatTtlMs: env.WORKER_HEARTBEAT_TTL_MS,
      sessionIdleMs: env.SESSION_IDLE_TIMEOUT_MS,
      sessionIdleAction: env.SESSION_IDLE_ACTION || undefined,
      sessionHibernateAfterMs: env.SESSION_HIBERNATE_AFTER_MS,
      hibernatedRetentionMs: env.SESSION_HIBERNATED_RETENTION_MS,
      reaperIntervalMs: env.SESSION_REAPER_INTERVAL_MS,
      interruptGraceMs: env.SANDBOX_INTERRUPT_GRACE_MS,
      // WORKER_SHUTDOWN_GRACE_MS is its name before drains existed.
      drainTimeoutMs: env.WORKER_DRAIN_TIMEOUT_MS ?? env.WORKER_SHUTDOWN_GRACE_MS,
      drainSettleMs: env.WORKER_DRAIN_SETTLE_MS,
      executionStartDeadlineMs: env.EXECUTION_START_DEADLINE_MS,
      poolSize: env.WORKER_POOL_SIZE,
      orphanSweepMs: env.WORKER_ORPHAN_SWEEP_MS,
      metricsPort: env.WORKER_METRICS_PORT,
      metricsHost: env.WORKER_METRICS_HOST,
    },
    rateLimits: {
      requestsPerMinute: env.RATE_LIMIT_REQUESTS_PER_MINUTE,
      concurrentExecutions: env.RATE_LIMIT_CONCURRENT_EXECUTIONS,
    },
    vfs: {
      maxFileBytes: env.VFS_MAX_FILE_BYTES,
      maxTenantBytes: env.VFS_MAX_TENANT_BYTES,
      maxArchiveBytes: env.VFS_MAX_ARCHIVE_BYTES,
      maxArchiveEntries: env.VFS_MAX_ARCHIVE_ENTRIES,
      maxFilesPerThread: env.VFS_MAX_FILES_PER_THREAD,
    },
    artifacts: {
      dir: env.ARTIFACTS_DIR,
      maxFileBytes: env.ARTIFACTS_MAX_FILE_BYTES,
      signingSecret: env.ARTIFACTS_SIGNING_SECRET || undefined,
      urlDefaultTtlSeconds: env.ARTIFACTS_URL_DEFAULT_TTL_S,
      urlMaxTtlSeconds: env.ARTIFACTS_URL_MAX_TTL_S,
      maxCountPerTenant: env.ARTIFACTS_MAX_COUNT_PER_TENANT,
      maxBytesPerTenant: env.ARTIFACTS_MAX_BYTES_PER_TENANT,
      retentionSeconds: env.ARTIFACTS_RETENTION_S,
      expiryIntervalMs: env.ARTIFACTS_EXPIRY_INTERVAL_MS,
    },
    snapshots: {
      maxCountPerTenant: env.SNAPSHOT_MAX_COUNT_PER_TENANT,
      maxBytesPerTenant: env.SNAPSHOT_MAX_BYTES_PER_TENANT,
      retentionSeconds: env.SNAPSHOT_RETENTION_S,
    },
    docker: {
      socketPath: env.DOCKER_SOCKET,
      sandboxImage: env.SANDBOX_IMAGE,
      sessionBindDir: env.SESSION_BIND_DIR || undefined,
      channelDir: env.SANDBOX_CHANNEL_DIR || undefined,
      ...sandboxRuntimes(env),
      seccompProfile: env.SANDBOX_SECCOMP_PROFILE || undefined,
      preloadModules: env.SANDBOX_PRELOAD_MODULES,
    },
    datasets: { dir: env.DATASETS_DIR || undefined, maxStagedBytes: env.DATASETS_MAX_STAGED_BYTES },
    egress: {
      allowedRanges: env.EGRESS_ALLOWED_RANGES || undefined,
      resolve: env.EGRESS_RESOLVE || undefined,
      deny: env.EGRESS_DENY || undefined,
      connectTimeoutMs: env.EGRESS_CONNECT_TIMEOUT_MS,
      logRetentionDays: env.EGRESS_LOG_RETENTION_DAYS,
    },
    templates: {
      registry: env.TEMPLATE_REGISTRY || undefined,
      registryApiUrl: env.TEMPLATE_REGISTRY_API_URL || undefined,
      buildTimeoutMs: env.TEMPLATE_BUILD_TIMEOUT_MS,
      maxDockerfileBytes: env.TEMPLATE_MAX_DOCKERFILE_BYTES,
      maxContextFiles: env.TEMPLATE_MAX_CONTEXT_FILES,
      maxContextBytes: env.TEMPLATE_MAX_CONTEXT_BYTES,
      maxAddedImageMb: env.TEMPLATE_MAX_ADDED_IMAGE_MB,
      buildMemoryMb: env.TEMPLATE_BUILD_MEMORY_MB,
      buildNetwork: env.TEMPLATE_BUILD_NETWORK || undefined,
      workerConcurrency: env.WORKER_TEMPLATE_BUILD_CONCURRENCY,
    },
    batches: {
      maxItems: env.BATCH_MAX_ITEMS,
      maxBodyBytes: env.BATCH_MAX_BODY_BYTES,
      maxCodeBytes: env.BATCH_MAX_CODE_BYTES,
      maxItemFiles: env.BATCH_MAX_ITEM_FILES,
      maxItemFileBytes: env.BATCH_MAX_ITEM_FILE_BYTES,
      tenantConcurrency: env.BATCH_TENANT_CONCURRENCY,
      defaultConcurrency: env.BATCH_DEFAULT_CONCURRENCY,
      workerConcurrency: env.WORKER_BATCH_CONCURRENCY,
      recycleSandboxes: env.BATCH_RECYCLE_SANDBOXES || undefined,
      maxAttempts: env.BATCH_MAX_ATTEMPTS,
      lockMs: env.BATCH_LOCK_MS,
      retentionSeconds: env.BATCH_RETENTION_S,
      maintenanceIntervalMs: env.BATCH_MAINTENANCE_INTERVAL_MS,
    },
    agent: {
      modelBaseUrl: env.AGENT_MODEL_BASE_URL || undefined,
      modelApiKey: env.AGENT_MODEL_API_KEY || undefined,
      model: env.AGENT_MODEL || undefined,
      modelTimeoutMs: env.AGENT_MODEL_TIMEOUT_MS,
      evictionThresholdChars: env.AGENT_EVICTION_THRESHOLD_CHARS,
      maxEvictedResults: env.AGENT_MAX_EVICTED_RESULTS,
      maxSteps: env.AGENT_MAX_STEPS,
      checkpointDurability: env.AGENT_CHECKPOINT_DURABILITY || undefined,
      checkpointCacheThreads: env.AGENT_CHECKPOINT_CACHE_THREADS,
      checkpointCacheIdleMs: env.AGENT_CHECKPOINT_CACHE_IDLE_MS,
      filesystemRoots: env.AGENT_FILESYSTEM_ROOTS || undefined,
    },
    defaultLimits: {
      memoryMb: env.SANDBOX_MEMORY_MB,
      cpus: env.SANDBOX_CPUS,
      timeoutMs: env.SANDBOX_TIMEOUT_MS,
      pids: env.SANDBOX_PIDS,
      sessionDiskMb: env.SANDBOX_SESSION_DISK_MB,
      tmpDiskMb: env.SANDBOX_TMP_DISK_MB,
      maxOutputBytes: env.SANDBOX_MAX_OUTPUT_BYTES,
    },
    maxLimits: {
      memoryMb: env.SANDBOX_MAX_MEMORY_MB,
      cpus: env.SANDBOX_MAX_CPUS,
      timeoutMs: env.SANDBOX_MAX_TIMEOUT_MS,
      pids: env.SANDBOX_MAX_PIDS,
      sessionDiskMb: env.SANDBOX_MAX_SESSION_DISK_MB,
      tmpDiskMb: env.SANDBOX_MAX_TMP_DISK_MB,
      maxOutputBytes: env.SANDBOX_MAX_OUTPUT_BYTES_CEILING,
    },
  };
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const key = issue.path.join('.');
      return `  ${ENV_NAMES[key] ?? key}: ${issue.message}`;
    });
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  if (parsed.data.docker.defaultTier === 'gvisor' && !parsed.data.docker.gvisorRuntime) {
    throw new ConfigError('Invalid configuration:\n  SANDBOX_DEFAULT_TIER: "gvisor" needs SANDBOX_GVISOR_RUNTIME (the Docker runtime of gVisor, e.g. runsc)');
  }
  return parsed.data;
}

export const APP_CONFIG = Symbol('APP_CONFIG');
