import { Inject, Injectable, Logger, Optional, type OnModuleInit } from '@nestjs/common';
import Docker from 'dockerode';
import { APP_CONFIG, ConfigError, UnavailableError, type AppConfig } from '@drydock/core';
import { createHash } from 'node:crypto';
import { copyFile, chown, link, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';
import type { Duplex } from 'node:stream';
import {
  CheckpointRefusedError,
  SANDBOX_EGRESS,
  type Sandbox,
  type SandboxCheckpointFile,
  type SandboxEgress,
  type SandboxRuntime,
  type SandboxSpec,
} from '@drydock/execution';
import {
  CHANNEL_SOCKET_NAME,
  EGRESS_SOCKET_NAME,
  LABEL_SESSION,
  LABEL_WORKER,
  SANDBOX_UID,
  SUPERVISOR_UID,
  sandboxContainerOptions,
  sessionVolumeOptions,
  type SandboxHardening,
  type SessionStorageMount,
} from './container-spec.js';
import { DockerSandbox } from './docker-sandbox.js';
import { PlatformRuntimeVolumes } from './templates/platform-runtime-volume.js';
import { parseOperatorSeccompProfile } from './seccomp/operator-seccomp-profile.js';
import { SANDBOX_SECCOMP_PROFILE } from './seccomp/sandbox-seccomp.profile.js';

const READY_TIMEOUT_MS = 30_000;
// Slack beyond the execution timeout before the worker stops trusting the supervisor.
const HARD_DEADLINE_SLACK_MS = 10_000;
// How often the worker tries the socket channel while the supervisor starts.
const CHANNEL_RETRY_MS = 5;
// How often, meanwhile, it asks Docker whether the container still runs.
const CHANNEL_CHECK_MS = 250;
// sun_path holds 108 bytes, the last one a NUL.
const MAX_SOCKET_PATH_BYTES = 107;

// The checkpoint's name in Docker's folder of the container it restores into.
const CHECKPOINT_ID = 'drydock';
// What the supervisor waits for in its channel folder before it listens again.
const RESUME_FILE = 'resume';

const channelFolderName = (containerName: string) => createHash('sha256').update(containerName).digest('base64url').slice(0, 16);

@Injectable()
export class DockerSandboxRuntime implements SandboxRuntime, OnModuleInit {
  private readonly logger = new Logger(DockerSandboxRuntime.name);
  private readonly docker: Docker;
  private readonly pulls = new Map<string, Promise<void>>();
  private readonly runtimes: PlatformRuntimeVolumes;
  private hardening: SandboxHardening = { seccompProfileJson: JSON.stringify(SANDBOX_SECCOMP_PROFILE) };
  // Docker's data root (`docker info`), where a restore finds its checkpoint; known once
  // the gvisor tier is checked at start.
  private dockerRoot: string | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    // The worker's egress proxy; absent (tests, tools): sandboxes with a network policy
    // are refused.
    @Optional() @Inject(SANDBOX_EGRESS) private readonly egress?: SandboxEgress,
  ) {
    this.docker = new Docker({ socketPath: config.docker.socketPath });
    this.runtimes = new PlatformRuntimeVolumes(this.docker);
  }

  // The worker refuses to start with a runtime Docker does not know or a profile that is
  // not one, instead of failing every session later.
  async onModuleInit(): Promise<void> {
    const { runtime, seccompProfile } = this.config.docker;
    let profile = this.hardening.seccompProfileJson;
    if (seccompProfile) {
      const text = await readFile(seccompProfile, 'utf8').catch((error: Error) => {
        throw new ConfigError(`SANDBOX_SECCOMP_PROFILE: cannot read ${seccompProfile}: ${error.message}`);
      });
      profile = parseOperatorSeccompProfile(text, seccompProfile);
    }
    const { gvisorRuntime } = this.config.docker;
    if (runtime || gvisorRuntime) {
      const info = (await this.docker.info()) as { Runtimes?: Record<string, unknown>; DockerRootDir?: string };
      const known = Object.keys(info.Runtimes ?? {});
      for (const [name, value] of [['SANDBOX_RUNTIME', runtime], ['SANDBOX_GVISOR_RUNTIME', gvisorRuntime]] as const) {
        if (value && !known.includes(value)) {
          throw new ConfigError(`${name}: Docker has no runtime "${value}" (it has: ${known.join(', ') || 'none'})`);
        }
      }
      this.dockerRoot = info.DockerRootDir ?? null;
    }
    this.hardening = { seccompProfileJson: profile, runtime };
    const { channelDir } = this.config.docker;
    if (channelDir) {
      const longest = join(resolve(channelDir), channelFolderName('x'), CHANNEL_SOCKET_NAME);
      if (Buffer.byteLength(longest) > MAX_SOCKET_PATH_BYTES) {
        throw new ConfigError(
          `SANDBOX_CHANNEL_DIR: ${resolve(channelDir)} is too long for a socket path (at most ${MAX_SOCKET_PATH_BYTES - (longest.length - resolve(channelDir).length)} bytes)`,
        );
      }
    }
  }

  checkpointUnavailable(spec: Pick<SandboxSpec, 'tier' | 'storage'>): string | null {
    if (spec.tier !== 'gvisor') return `it runs on the ${spec.tier ?? 'runc'} tier; only gvisor sessions can be checkpointed`;
    if (!this.config.docker.channelDir) return 'this deployment reaches its sandboxes over attached streams (a checkpoint needs SANDBOX_CHANNEL_DIR)';
    if (spec.storage === 'bind') return 'its /session is a host folder (bind storage), which a checkpoint cannot carry';
    if (!this.dockerRoot) return "the worker does not know Docker's data root";
    return null;
  }

  // The supervisor lets go of its channel (checkpoint.py), the runtime saves the
  // container's processes and memory (runsc checkpoint, through Docker's checkpoint API)
  // into a folder of ours, and the container goes. Should the runtime fail, the supervisor
  // is told to take its channel again and the sandbox runs on.
  async checkpoint(sandbox: Sandbox): Promise<SandboxCheckpointFile> {
    if (!(sandbox instanceof DockerSandbox)) throw new CheckpointRefusedError('not a sandbox of this runtime');
    const container = this.docker.getContainer(sandbox.id);
    const info = await container.inspect();
    const channelDir = this.channelDirOf(info.Name.replace(/^\//, ''));
    const why = this.checkpointUnavailable({ tier: info.HostConfig.Runtime === this.config.docker.gvisorRuntime ? 'gvisor' : 'runc' });
    if (why || !channelDir) throw new CheckpointRefusedError(why ?? 'no socket channel');
    await sandbox.letGo();
    const dir = await mkdtemp(join(tmpdir(), 'drydock-checkpoint-'));
    try {
      // @types/dockerode does not declare createCheckpoint (dockerode has it).
      const create = (container as unknown as { createCheckpoint(opts: object): Promise<unknown> }).createCheckpoint;
      await create.call(container, { CheckpointID: CHECKPOINT_ID, CheckpointDir: dir, Exit: true });
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      await this.resumeInPlace(sandbox, channelDir).catch(async (resumeError: Error) => {
        this.logger.warn(`${sandbox.id} did not come back after a failed checkpoint: ${resumeError.message}`);
        await sandbox.destroy().catch(() => undefined);
      });
      throw new CheckpointRefusedError(`the runtime could not checkpoint the sandbox: ${(error as Error).message}`);
    }
    await sandbox.destroy();
    const path = join(dir, CHECKPOINT_ID, 'checkpoint.img');
    const { size } = await stat(path);
    return { path, sizeBytes: size, remove: () => rm(dir, { recursive: true, force: true }) };
  }

  private async resumeInPlace(sandbox: DockerSandbox, channelDir: string): Promise<void> {
    await writeFile(join(channelDir, RESUME_FILE), '');
    const deadline = Date.now() + READY_TIMEOUT_MS;
    const channel = await connectWhenListening(join(channelDir, CHANNEL_SOCKET_NAME), deadline, async () => null);
    await sandbox.reattach(channel, Math.max(1, deadline - Date.now()));
  }

  async create(spec: SandboxSpec, options: { restoreFrom?: string } = {}): Promise<Sandbox> {
    const { restoreFrom } = options;
    if (restoreFrom) {
      const why = this.checkpointUnavailable(spec);
      if (why) throw new Error(`cannot restore: ${why}`);
    }
    if (spec.network && (!this.egress || !this.config.docker.channelDir)) {
      throw new UnavailableError(
        'NETWORK_UNAVAILABLE',
        'This deployment cannot give sandboxes a network: the egress proxy needs the socket channel (the operator sets SANDBOX_CHANNEL_DIR).',
      );
    }
    const image = spec.image ?? this.config.docker.sandboxImage;
    let platformRuntimeVolume: string | undefined;
    if (spec.image) {
      await this.ensureImage(spec.image);
      platformRuntimeVolume = await this.runtimes.ensureFor(this.config.docker.sandboxImage);
    }
    const name = `drydock-${spec.sessionId}-${Date.now().toString(36)}`;
    let session: SessionStorageMount;
    let removeVolume: () => Promise<void>;
    if (spec.tier === 'gvisor' && spec.storage !== 'bind') {
      // In the sandbox's own memory, saved with it by a checkpoint.
      session = { memory: true };
      removeVolume = async () => undefined;
    } else if (spec.storage === 'bind') {
      // The folder outlives the container (a crash keeps the files) and goes with the
      // session (releaseSession).
      session = { hostDir: await this.bindDir(spec.sessionId, true) };
      removeVolume = async () => undefined;
    } else {
      await this.docker.createVolume(sessionVolumeOptions(spec, name));
      session = { volume: name };
      removeVolume = () =>
        this.docker
          .getVolume(name)
          .remove()
          .catch((error: Error) => this.logger.warn(`could not remove volume ${name}: ${error.message}`));
    }
    const channelDir = this.channelDirOf(name);
    let egress: { close(): Promise<void> } | null = null;
    const release = async () => {
      await egress?.close().catch((error: Error) => this.logger.warn(`closing the egress socket of ${name} failed: ${error.message}`));
      await removeVolume();
      if (channelDir) await rm(channelDir, { recursive: true, force: true }).catch(() => undefined);
    };
    let container: Docker.Container;
    try {
      if (channelDir) {
        // Only the supervisor's user may enter it: user code never reaches the socket.
        await mkdir(channelDir, { recursive: true, mode: 0o700 });
        await chown(channelDir, SUPERVISOR_UID, SUPERVISOR_UID);
        if (spec.network && this.egress) {
          egress = await this.egress.open(spec, join(channelDir, EGRESS_SOCKET_NAME), { uid: SUPERVISOR_UID, gid: SUPERVISOR_UID });
        }
      }
      container = await this.docker.createContainer({
        ...sandboxContainerOptions(
          spec,
          image,
          session,
          this.hardeningFor(spec),
          { preloadModules: this.config.docker.preloadModules, platformRuntimeVolume },
          channelDir ?? undefined,
        ),
        name,
      });
    } catch (error) {
      await release();
      throw error;
    }
    try {
      if (restoreFrom && channelDir) {
        await this.placeCheckpoint(container.id, restoreFrom);
        // Already there when the restored supervisor looks: it listens at once.
        await writeFile(join(channelDir, RESUME_FILE), '');
        await chown(join(channelDir, RESUME_FILE), SUPERVISOR_UID, SUPERVISOR_UID);
      }
      const start = restoreFrom ? () => this.startFromCheckpoint(container.id) : () => container.start();
      const sandbox = channelDir
        ? await this.startOnSocket(container, join(channelDir, CHANNEL_SOCKET_NAME), release, start)
        : await this.startAttached(container, release);
      return sandbox;
    } catch (error) {
      await container.remove({ force: true }).catch(() => undefined);
      await release();
      throw error;
    }
  }

  // A template's image, pulled from the registry the first time this engine needs it
  // (one pull per image however many sandboxes wait for it).
  private ensureImage(ref: string): Promise<void> {
    let pending = this.pulls.get(ref);
    if (!pending) {
      pending = this.pullIfMissing(ref).finally(() => this.pulls.delete(ref));
      this.pulls.set(ref, pending);
    }
    return pending;
  }

  private async pullIfMissing(ref: string): Promise<void> {
    try {
      await this.docker.getImage(ref).inspect();
      return;
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode !== 404) throw error;
    }
    const started = Date.now();
    const stream = await this.docker.pull(ref);
    let failure: string | null = null;
    await new Promise<void>((resolve, reject) =>
      this.docker.modem.followProgress(
        stream,
        (error: Error | null) => (error ? reject(error) : resolve()),
        (event: { error?: string }) => {
          if (event.error) failure = event.error;
        },
      ),
    );
    if (failure) throw new Error(`pulling the template image ${ref} failed: ${failure}`);
    this.logger.log(`pulled ${ref} in ${Date.now() - started} ms`);
  }

  // The attached stdin/stdout: wired before the start, so `ready` cannot be missed.
  private async startAttached(container: Docker.Container, release: () => Promise<void>): Promise<DockerSandbox> {
    const channel = (await container.attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true })) as unknown as Duplex;
    const sandbox = new DockerSandbox(container.id, container, channel, HARD_DEADLINE_SLACK_MS, release);
    sandbox.attach(this.docker.modem as never);
    const ready = sandbox.waitReady(READY_TIMEOUT_MS);
    await container.start();
    await ready;
    return sandbox;
  }

  // The socket channel: started, then connected once the supervisor listens; it sends
  // `ready` when it has accepted the connection.
  private async startOnSocket(
    container: Docker.Container,
    path: string,
    release: () => Promise<void>,
    start: () => Promise<unknown> = () => container.start(),
  ): Promise<DockerSandbox> {
    await start();
    const deadline = Date.now() + READY_TIMEOUT_MS;
    const channel = await connectWhenListening(path, deadline, async () => {
      const { State } = await container.inspect();
      return State.Running ? null : `the sandbox stopped before its channel opened (exit code ${State.ExitCode})`;
    });
    const sandbox = new DockerSandbox(container.id, container, channel, HARD_DEADLINE_SLACK_MS, release);
    const ready = sandbox.waitReady(Math.max(1, deadline - Date.now()));
    sandbox.connect();
    await ready;
    return sandbox;
  }

  // The runtime for the spec's tier, and the seccomp profile.
  private hardeningFor(spec: SandboxSpec): SandboxHardening {
    const runtime = spec.tier === 'gvisor' ? this.config.docker.gvisorRuntime : this.config.docker.runtime;
    return { seccompProfileJson: this.hardening.seccompProfileJson, ...(runtime ? { runtime } : {}) };
  }

  // POST /containers/{id}/start?checkpoint=…: dockerode's start() would send the
  // parameter as a body, which the API refuses.
  private startFromCheckpoint(containerId: string): Promise<unknown> {
    return new Promise((resolve, reject) =>
      this.docker.modem.dial(
        {
          // docker-modem drops a query path's last character when it adds no parameters.
          path: `/containers/${containerId}/start?checkpoint=${CHECKPOINT_ID}&`,
          method: 'POST',
          statusCodes: { 204: true, 304: true, 404: 'no such container', 500: 'server error' },
        },
        (error: unknown, data: unknown) => (error ? reject(error as Error) : resolve(data)),
      ),
    );
  }

  // Docker starts a container from a checkpoint in its own folder of the container
  // (`docker start --checkpoint`; its API takes no other folder for runsc).
  private async placeCheckpoint(containerId: string, file: string): Promise<void> {
    if (!this.dockerRoot) throw new Error("Docker's data root is unknown");
    const dir = join(this.dockerRoot, 'containers', containerId, 'checkpoints', CHECKPOINT_ID);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    // A hard link on the same filesystem (no copy of the image); a copy elsewhere.
    await link(file, join(dir, 'checkpoint.img')).catch(() => copyFile(file, join(dir, 'checkpoint.img')));
  }

  // <SANDBOX_CHANNEL_DIR>/<hash of the container name>, or null for attached streams.
  // Short on purpose: a socket's path has at most 107 bytes.
  private channelDirOf(containerName: string): string | null {
    const root = this.config.docker.channelDir;
    return root ? join(resolve(root), channelFolderName(containerName)) : null;
  }

  async releaseSession(sessionId: string): Promise<void> {
    if (!this.config.docker.sessionBindDir) return;
    // rm never follows the symlinks code may have left in the folder.
    await rm(await this.bindDir(sessionId, false), { recursive: true, force: true });
  }

  // <SESSION_BIND_DIR>/<sessionId>, owned by the sandbox user and closed to others.
  private async bindDir(sessionId: string, create: boolean): Promise<string> {
    const root = this.config.docker.sessionBindDir;
    if (!root) throw new Error('bind storage needs SESSION_BIND_DIR');
    if (!/^[A-Za-z0-9_-]+$/.test(sessionId)) throw new Error(`unexpected session id ${sessionId}`);
    const dir = join(resolve(root), sessionId);
    if (create) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await chown(dir, SANDBOX_UID, SANDBOX_UID);
    }
    return dir;
  }

  async removeOrphans(workerId: string, keep: ReadonlySet<string>): Promise<number> {
    const containers = await this.docker.listContainers({
      all: true,
      filters: { label: [`${LABEL_WORKER}=${workerId}`] },
    });
    let removed = 0;
    for (const info of containers) {
      if (keep.has(info.Labels[LABEL_SESSION] ?? '')) continue;
      await this.docker
        .getContainer(info.Id)
        .remove({ force: true })
        .then(() => removed++)
        .catch((error: Error) => this.logger.warn(`could not remove ${info.Id}: ${error.message}`));
      const channelDir = this.channelDirOf((info.Names?.[0] ?? '').replace(/^\//, ''));
      if (channelDir && info.Names?.[0]) await rm(channelDir, { recursive: true, force: true }).catch(() => undefined);
    }
    // Session volumes outlive their container only if removal was interrupted.
    const { Volumes } = await this.docker.listVolumes({ filters: { label: [`${LABEL_WORKER}=${workerId}`] } });
    for (const volume of Volumes ?? []) {
      if (keep.has(volume.Labels?.[LABEL_SESSION] ?? '')) continue;
      await this.docker
        .getVolume(volume.Name)
        .remove()
        .catch((error: Error) => this.logger.warn(`could not remove volume ${volume.Name}: ${error.message}`));
    }
    return removed;
  }

  async sandboxWorkers(): Promise<{ workerId: string; newestCreatedAt: number }[]> {
    const containers = await this.docker.listContainers({ all: true, filters: { label: [LABEL_WORKER] } });
    const newest = new Map<string, number>();
    for (const info of containers) {
      const workerId = info.Labels[LABEL_WORKER];
      if (workerId) newest.set(workerId, Math.max(newest.get(workerId) ?? 0, info.Created * 1000));
    }
    return [...newest].map(([workerId, newestCreatedAt]) => ({ workerId, newestCreatedAt }));
  }

  // Whether the daemon answers a ping within timeoutMs (the request is then aborted, so
  // a hung daemon does not leave sockets behind).
  async healthy(timeoutMs = 2_000): Promise<boolean> {
    try {
      // dockerode takes { abortSignal } here; @types/dockerode does not declare it yet.
      const ping = this.docker.ping as unknown as (this: Docker, opts: { abortSignal: AbortSignal }) => Promise<unknown>;
      await ping.call(this.docker, { abortSignal: AbortSignal.timeout(timeoutMs) });
      return true;
    } catch {
      return false;
    }
  }

  // Exposed for tests and benchmarks that assert on the real container configuration.
  inspect(containerId: string) {
    return this.docker.getContainer(containerId).inspect();
  }
}

// Connects to the supervisor's socket, trying again while it is not there yet (the
// container is starting) until the deadline. Every CHANNEL_CHECK_MS `stopped` says
// whether the container is gone (why, or null), so a supervisor that failed at start
// fails the session's start at once, as an attached stream's end does.
async function connectWhenListening(path: string, deadline: number, stopped: () => Promise<string | null>): Promise<Duplex> {
  let nextCheck = Date.now() + CHANNEL_CHECK_MS;
  for (;;) {
    try {
      return await new Promise<Duplex>((resolve, reject) => {
        const socket = connect(path);
        socket.once('connect', () => {
          socket.off('error', reject);
          socket.setNoDelay?.(true);
          resolve(socket);
        });
        socket.once('error', reject);
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code !== 'ENOENT' && code !== 'ECONNREFUSED') || Date.now() >= deadline) {
        throw new Error(`the sandbox's channel ${path} did not open: ${(error as Error).message}`);
      }
      if (Date.now() >= nextCheck) {
        const why = await stopped();
        if (why) throw new Error(why);
        nextCheck = Date.now() + CHANNEL_CHECK_MS;
      }
      await new Promise((r) => setTimeout(r, CHANNEL_RETRY_MS));
    }
  }
}
