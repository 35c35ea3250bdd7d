import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, DrydockError, newId, TenantsService, type AppConfig, type SandboxTier, type TenantLimits } from '@drydock/core';
import { JOB_DISPATCHER, JobName, type JobDispatcher, type SessionDataset, type SessionSpec } from '@drydock/execution';
import { narrowedPolicy, policyWithin } from '@drydock/egress';
import { TemplatesService } from '@drydock/templates';
import { DatasetRegistry } from './datasets/dataset-registry.js';
import { resolveLimits, type RequestedLimits } from './session-limits.js';
import { SessionsError } from './sessions.errors.js';
import { SESSIONS_REPOSITORY, type SessionRecord, type SessionsRepository } from './sessions.repository.js';
import type { SessionIdleAction, SessionStorage } from './session.entity.js';
import { pickWorker, WORKER_REGISTRY, type WorkerInfo, type WorkerRegistry } from './worker-registry.js';

export interface CreateSessionCommand {
  threadId?: string;
  limits?: RequestedLimits;
  storage?: SessionStorage;
  datasets?: SessionDataset[];
  // "name" or "name:version" (docs/templates.md); absent: the platform's image.
  template?: string;
  // The hosts its code may reach, within the tenant's ceiling (docs/network.md).
  network?: { allow: readonly unknown[] };
  // The isolation tier (docs/sessions.md); absent: the tenant's default.
  tier?: SandboxTier;
  // What the session comes to when idle (docs/sessions.md); absent: the deployment's.
  idleAction?: SessionIdleAction;
  // A fork: the snapshot (POST /v1/sessions/:id/snapshots) the new session starts from,
  // with its variables, processes and files; it takes that session's settings.
  fromSnapshot?: string;
}

export interface StagedDataset {
  name: string;
  mode: 'staged';
  files: number;
  bytes: number;
}

const START_WAIT_MS = 60_000;
const STAGE_WAIT_MS = 5 * 60_000;
// A checkpoint of a few hundred MB, compressed and stored.
const HIBERNATE_WAIT_MS = 5 * 60_000;

@Injectable()
export class SessionsService {
  private readonly logger = new Logger(SessionsService.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SESSIONS_REPOSITORY) private readonly sessions: SessionsRepository,
    @Inject(WORKER_REGISTRY) private readonly workers: WorkerRegistry,
    @Inject(JOB_DISPATCHER) private readonly dispatcher: JobDispatcher,
    private readonly tenants: TenantsService,
    private readonly datasets: DatasetRegistry,
    private readonly templates: TemplatesService,
  ) {}

  get idleMs(): number {
    return this.config.worker.sessionIdleMs;
  }

  get hibernatedRetentionMs(): number {
    return this.config.worker.hibernatedRetentionMs;
  }

  // Creates the thread's session, or returns its live one (`created: false`).
  async create(tenantId: string, command: CreateSessionCommand): Promise<{ session: SessionRecord; created: boolean }> {
    if (command.fromSnapshot !== undefined) return { session: await this.fork(tenantId, command), created: true };
    const tenant = await this.tenants.get(tenantId);
    const threadId = command.threadId ?? newId('thr');
    const limits = resolveLimits(this.config, tenant.limits, command.limits);
    if (command.storage === 'bind' && !this.config.docker.sessionBindDir) {
      throw new DrydockError(
        'STORAGE_NOT_AVAILABLE',
        'Session storage "bind" is not enabled on this deployment (the operator sets SESSION_BIND_DIR); use "tmpfs".',
        422,
      );
    }
    const datasets = await this.checkDatasets(tenantId, command.datasets ?? []);
    const network = command.network ? policyWithin(tenant.limits.network, command.network) : null;
    const template = command.template === undefined ? null : await this.templates.resolve(tenantId, command.template);
    const tier = this.tierFor(tenant.limits, command.tier);
    const maxSessions = tenant.limits.maxSessions;
    if (maxSessions !== undefined && (await this.sessions.countLive(tenantId)) >= maxSessions) {
      const live = (await this.sessions.list(tenantId, { includeEnded: false, limit: 1000 })).find(
        (s) => s.threadId === threadId,
      );
      if (!live) throw SessionsError.tooManySessions(maxSessions);
    }
    const worker = pickWorker(await this.workers.listLive());
    if (!worker) throw SessionsError.noWorker();
    const { record, created } = await this.sessions.createOrGetLive(tenantId, {
      id: newId('ses'),
      threadId,
      workerId: worker.id,
      limits,
      storage: command.storage ?? 'tmpfs',
      datasets,
      template: template?.ref ?? null,
      image: template?.imageRef ?? null,
      network,
      tier,
      idleAction: command.idleAction ?? null,
    });
    if (!created) return { session: await this.ensurePlaced(record), created: false };
    return { session: await this.startOnWorker(record), created: true };
  }

  // A new session from a snapshot of one of the tenant's sessions (another tenant's is
  // not found): the settings of that session, its own thread (named, or new), and its
  // sandbox restored from the snapshot by its first job (the start).
  private async fork(tenantId: string, command: CreateSessionCommand): Promise<SessionRecord> {
    const { fromSnapshot, threadId: named, idleAction, ...others } = command;
    const extra = Object.entries(others).filter(([, v]) => v !== undefined).map(([k]) => k);
    if (extra.length > 0) {
      throw new DrydockError('INVALID_FORK', `A fork takes its snapshot's settings; send only fromSnapshot and threadId (not ${extra.join(', ')}).`, 400);
    }
    const snapshot = await this.sessions.findCheckpoint(tenantId, fromSnapshot!);
    if (!snapshot || snapshot.kind !== 'snapshot' || (snapshot.expiresAt && snapshot.expiresAt <= new Date())) throw SessionsError.snapshotNotFound(fromSnapshot!);
    const source = await this.sessions.findById(tenantId, snapshot.sessionId);
    if (!source) throw SessionsError.snapshotNotFound(fromSnapshot!);
    const tenant = await this.tenants.get(tenantId);
    this.tierFor(tenant.limits, snapshot.tier);
    const maxSessions = tenant.limits.maxSessions;
    if (maxSessions !== undefined && (await this.sessions.countLive(tenantId)) >= maxSessions) throw SessionsError.tooManySessions(maxSessions);
    const worker = pickWorker(await this.workers.listLive());
    if (!worker) throw SessionsError.noWorker();
    const threadId = named ?? newId('thr');
    const { record, created } = await this.sessions.createOrGetLive(tenantId, {
      id: newId('ses'),
      threadId,
      workerId: worker.id,
      limits: source.limits,
      storage: source.storage,
      datasets: source.datasets ?? [],
      template: source.template,
      image: snapshot.image,
      network: source.network,
      tier: snapshot.tier,
      resumeFrom: snapshot.id,
      idleAction: idleAction ?? source.idleAction ?? null,
    });
    if (!created) throw SessionsError.threadBusy(threadId);
    return this.startOnWorker(record);
  }

  // The new session's first job: its container up (or restored), its thread's files in.
  private async startOnWorker(record: SessionRecord): Promise<SessionRecord> {
    const { tenantId } = record;
    try {
      await this.onItsWorker(record, (placed) =>
        this.dispatcher.dispatch(placed.workerId, JobName.StartSession, { session: specOf(placed) }, { waitMs: START_WAIT_MS }),
      );
    } catch (error) {
      await this.sessions.end(tenantId, record.id, 'start-failed');
      this.logger.warn(`session ${record.id} failed to start: ${(error as Error).message}`);
      // The worker's own typed error (e.g. SANDBOX_UNAVAILABLE) when it answered.
      if (error instanceof DrydockError) throw error;
      throw SessionsError.sandboxFailed((error as Error).message);
    }
    return (await this.sessions.findById(tenantId, record.id))!;
  }

  // Copies a dataset into the live session's /session/data/<name> now, and again
  // whenever its container is re-created.
  async stageDataset(tenantId: string, sessionId: string, name: string): Promise<StagedDataset> {
    await this.datasets.resolve(tenantId, name);
    const session = await this.ensurePlaced(await this.get(tenantId, sessionId));
    const mounted = (session.datasets ?? []).find((d) => d.name === name && d.mode === 'local_ro');
    if (mounted) {
      throw new DrydockError('DATASET_MOUNTED', `Dataset "${name}" is already mounted read-only at /data/${name} in this session.`, 409);
    }
    await this.datasets.assertStageable(await this.datasets.resolve(tenantId, name));
    const dataset: SessionDataset = { name, mode: 'staged' };
    const spec = specOf(session);
    if (!spec.datasets!.some((d) => d.name === name)) spec.datasets!.push(dataset);
    // Recorded once it is in the sandbox: a failed copy leaves the session as it was.
    let staged: StagedDataset;
    try {
      staged = await this.onItsWorker(session, (placed) =>
        this.dispatcher.dispatch(placed.workerId, JobName.StageDataset, { session: { ...spec, ...specOf(placed), datasets: spec.datasets }, name }, { waitMs: STAGE_WAIT_MS }),
      );
    } catch (error) {
      this.logger.warn(`staging ${name} into ${sessionId} failed: ${(error as Error).message}`);
      // The worker's typed error: e.g. the dataset is gone from its host, or the
      // session ended there.
      if (error instanceof DrydockError) throw error;
      throw SessionsError.sandboxFailed(`dataset "${name}" could not be copied into the session`);
    }
    if (!(await this.sessions.addDataset(tenantId, sessionId, dataset))) throw SessionsError.ended(sessionId);
    return staged;
  }

  private async checkDatasets(tenantId: string, datasets: SessionDataset[]): Promise<SessionDataset[]> {
    const seen = new Set<string>();
    for (const { name } of datasets) {
      if (seen.has(name)) throw new DrydockError('DUPLICATE_DATASET', `Dataset "${name}" is named twice; name each dataset once.`, 400);
      seen.add(name);
      const resolved = await this.datasets.resolve(tenantId, name);
      if (datasets.find((d) => d.name === name)!.mode === 'staged') await this.datasets.assertStageable(resolved);
    }
    return datasets.map(({ name, mode }) => ({ name, mode }));
  }

  async get(tenantId: string, sessionId: string): Promise<SessionRecord> {
    const session = await this.sessions.findById(tenantId, sessionId);
    if (!session) throw SessionsError.notFound(sessionId);
    return session;
  }

  list(tenantId: string, includeEnded = false): Promise<SessionRecord[]> {
    return this.sessions.list(tenantId, { includeEnded, limit: 500 });
  }

  async delete(tenantId: string, sessionId: string): Promise<void> {
    const session = await this.get(tenantId, sessionId);
    if (session.status === 'ended') return;
    await this.end(session, 'deleted');
  }

  // Ends every live session of the tenant (an operator suspending or deleting it): each
  // is marked ended with `reason` and its worker destroys its container. The count.
  async endAllOf(tenantId: string, reason: string): Promise<number> {
    let ended = 0;
    // Bounded: each pass ends what it listed, so the next lists what started meanwhile.
    for (let pass = 0; pass < 100; pass++) {
      const live = await this.sessions.list(tenantId, { includeEnded: false, limit: 500 });
      if (live.length === 0) break;
      await Promise.all(live.map((session) => this.end(session, reason)));
      ended += live.length;
    }
    return ended;
  }

  private async end(session: SessionRecord, reason: string): Promise<void> {
    const { id: sessionId, tenantId } = session;
    await this.sessions.end(tenantId, sessionId, reason);
    if (await this.workers.isLive(session.workerId)) {
      await this.dispatcher
        .dispatch(session.workerId, JobName.StopSession, { session: { sessionId, tenantId } }, { waitMs: 30_000 })
        .catch((error: Error) => this.logger.warn(`stop of ${sessionId} failed: ${error.message}`));
    }
  }

  // Sends a session's job to its worker; when that worker drained and sent the job back
  // (SESSION_MOVED), places the session again and resends, a few times at most.
  async onItsWorker<T>(session: SessionRecord, send: (placed: SessionRecord) => Promise<T>): Promise<T> {
    let placed = session;
    for (let attempt = 1; ; attempt++) {
      try {
        return await send(placed);
      } catch (error) {
        if (!(error instanceof DrydockError && error.code === 'SESSION_MOVED') || attempt >= 3) throw error;
        placed = await this.ensurePlaced(await this.get(session.tenantId, session.id));
      }
    }
  }

  // Narrows a live session's policy (never widens it): its next connection is decided
  // by the new one.
  async narrowNetwork(tenantId: string, sessionId: string, requested: { allow: readonly unknown[] }): Promise<SessionRecord> {
    const session = await this.get(tenantId, sessionId);
    if (session.status === 'ended') throw SessionsError.ended(sessionId);
    if (!session.network) {
      throw new DrydockError('NETWORK_NOT_ALLOWED', 'This session has no network; a policy cannot be added to a running session (start one with "network").', 422, {
        entries: requested.allow.filter((e) => typeof e === 'string'),
      });
    }
    const network = narrowedPolicy(session.network, requested);
    if (!(await this.sessions.setNetwork(tenantId, sessionId, network))) throw SessionsError.ended(sessionId);
    return (await this.sessions.findById(tenantId, sessionId))!;
  }

  // The tiers this deployment offers, its default first.
  offeredTiers(): SandboxTier[] {
    const { defaultTier, gvisorRuntime } = this.config.docker;
    const offered: SandboxTier[] = gvisorRuntime ? ['runc', 'gvisor'] : ['runc'];
    return [defaultTier, ...offered.filter((t) => t !== defaultTier)];
  }

  // The asked tier, else the tenant's first, else the deployment's default: offered here
  // (TIER_NOT_AVAILABLE) and among the tenant's (TIER_NOT_ALLOWED).
  private tierFor(limits: TenantLimits, asked: SandboxTier | undefined): SandboxTier {
    const offered = this.offeredTiers();
    const allowed = limits.tiers?.length ? limits.tiers.filter((t) => offered.includes(t)) : offered;
    const tier = asked ?? allowed[0] ?? offered[0]!;
    if (!offered.includes(tier)) throw SessionsError.tierNotAvailable(tier);
    if (!allowed.includes(tier)) throw SessionsError.tierNotAllowed(tier, allowed);
    return tier;
  }

  // Checkpoints the session's sandbox and removes its container (decision 018); its next
  // job resumes it. A hibernated session is left as it is.
  async hibernate(tenantId: string, sessionId: string): Promise<SessionRecord> {
    const session = await this.get(tenantId, sessionId);
    if (session.status === 'ended') throw SessionsError.ended(sessionId);
    if (session.status === 'hibernated') return session;
    if (session.tier !== 'gvisor') {
      throw SessionsError.checkpointNotAvailable(sessionId, `it runs on the ${session.tier} tier; only gvisor sessions can hibernate (create one with "tier": "gvisor").`);
    }
    await this.onItsWorker(await this.ensurePlaced(session), (placed) =>
      this.dispatcher.dispatch(placed.workerId, JobName.HibernateSession, { session: specOf(placed) }, { waitMs: HIBERNATE_WAIT_MS }),
    );
    return (await this.sessions.findById(tenantId, sessionId))!;
  }

  markLost(tenantId: string, sessionId: string): Promise<void> {
    return this.sessions.setStatus(tenantId, sessionId, 'lost');
  }

  // A live session whose worker died is moved to a live worker; the container will be
  // re-created there on the next job and the run will report the lost state.
  // A hibernated one stays where it is only while its worker takes sessions: its
  // checkpoint is restored by whichever worker hosts it next (a drained worker's go).
  async ensurePlaced(session: SessionRecord): Promise<SessionRecord> {
    if (session.status === 'ended') throw SessionsError.ended(session.id);
    if (session.status === 'hibernated') {
      const live = await this.workers.listLive();
      const own = live.find((w) => w.id === session.workerId);
      if (own && (own.state ?? 'active') === 'active') return session;
      return this.placeOn(session, pickWorker(live));
    }
    if (session.status !== 'lost' && (await this.workers.isLive(session.workerId))) return session;
    return this.placeOn(session, pickWorker(await this.workers.listLive()));
  }

  private async placeOn(session: SessionRecord, worker: WorkerInfo | null): Promise<SessionRecord> {
    if (!worker) throw SessionsError.noWorker();
    await this.sessions.moveToWorker(session.tenantId, session.id, worker.id);
    this.logger.log(`session ${session.id} moved from ${session.workerId} to ${worker.id}`);
    return (await this.sessions.findById(session.tenantId, session.id))!;
  }
}

export function specOf(session: SessionRecord): SessionSpec {
  return {
    sessionId: session.id,
    tenantId: session.tenantId,
    threadId: session.threadId,
    limits: session.limits,
    storage: session.storage,
    datasets: session.datasets ?? [],
    ...(session.image ? { image: session.image } : {}),
    ...(session.network ? { network: session.network } : {}),
    tier: session.tier,
    ...(session.idleAction ? { idleAction: session.idleAction } : {}),
  };
}
