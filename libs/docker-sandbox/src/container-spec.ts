import type { ContainerCreateOptions } from 'dockerode';
import type { SandboxSpec } from '@drydock/execution';

// User code runs as SANDBOX_UID, the supervisor as SUPERVISOR_UID (with the sandbox
// user's effective id): docs/decisions/007-sandbox-process-separation.md.
export const SANDBOX_UID = 10001;
export const SUPERVISOR_UID = 10002;
// The supervisor runs on the platform's own Python, through its own loader (the image's
// python3 is for user code): docker/sandbox/runtime/make_runtime.py.
export const SANDBOX_RUNTIME_DIR = '/opt/drydock/runtime';
export const SANDBOX_COMMAND = [
  `${SANDBOX_RUNTIME_DIR}/sys/ld.so`,
  '--library-path',
  `${SANDBOX_RUNTIME_DIR}/sys`,
  `${SANDBOX_RUNTIME_DIR}/bin/python3`,
  '-I',
  '-S',
  '-u',
  '/opt/drydock/repl/supervisor.py',
];
// With SANDBOX_CHANNEL_DIR, the host channel is a Unix socket in a host folder mounted
// here (docs/decisions/010-socket-host-channel.md) instead of the attached stdin/stdout.
export const CHANNEL_MOUNT = '/run/drydock';
export const CHANNEL_SOCKET_NAME = 'channel.sock';
// A sandbox with a network policy: the worker's egress proxy listens on this socket in
// the same folder, and the supervisor's forwarder relays the sandbox's loopback port to
// it (docs/decisions/017-egress-proxy.md). Packages pip installs go to their own
// tmpfs (not /session, whose files are the thread's).
export const EGRESS_SOCKET_NAME = 'egress.sock';
export const EGRESS_PROXY_URL = 'http://127.0.0.1:3128';
export const PACKAGES_DIR = '/opt/packages';

// What code in a sandbox with a network policy sees: the proxy for every HTTP client that
// honours the variables (curl, pip, requests, urllib, git), and pip set to install into
// the packages tmpfs for the sandbox user.
export function egressEnvironment(): string[] {
  return [
    `DRYDOCK_EGRESS_SOCKET=${CHANNEL_MOUNT}/${EGRESS_SOCKET_NAME}`,
    `DRYDOCK_EGRESS_LISTEN=127.0.0.1:3128`,
    `HTTP_PROXY=${EGRESS_PROXY_URL}`,
    `HTTPS_PROXY=${EGRESS_PROXY_URL}`,
    `http_proxy=${EGRESS_PROXY_URL}`,
    `https_proxy=${EGRESS_PROXY_URL}`,
    'NO_PROXY=localhost,127.0.0.1,::1',
    'no_proxy=localhost,127.0.0.1,::1',
    `PYTHONUSERBASE=${PACKAGES_DIR}`,
    'PIP_USER=1',
    'PIP_BREAK_SYSTEM_PACKAGES=1',
    'PIP_NO_CACHE_DIR=1',
    'PIP_DISABLE_PIP_VERSION_CHECK=1',
    `PATH=${PACKAGES_DIR}/bin:/usr/local/bin:/usr/bin:/bin`,
    // A recycled sandbox (the next item of a batch) starts without the packages too.
    `DRYDOCK_SCRATCH_DIRS=/tmp:/dev/shm:/dev/mqueue:${PACKAGES_DIR}`,
  ];
}

// Paths of /proc and /sys a sandbox sees as empty (Docker mounts /dev/null or an empty
// read-only tmpfs over them). Naming any replaces Docker's own list, so it is here whole:
// Docker 20.10's defaults, then what tells one sandbox about the host or about another
// sandbox: the host kernel's build configuration, and the host's boot id (the same in
// every container of the host since it booted).
export const MASKED_PATHS = [
  '/proc/asound',
  '/proc/acpi',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/proc/sched_debug',
  '/proc/scsi',
  '/sys/firmware',
  '/proc/config.gz',
  '/proc/sys/kernel/random/boot_id',
];

export const LABEL_SESSION = 'drydock.session';
export const LABEL_TENANT = 'drydock.tenant';
export const LABEL_WORKER = 'drydock.worker';

// `/session` is a per-session volume backed by tmpfs rather than a --tmpfs mount: the
// Docker archive API (file sync, artifact ingestion) cannot reach --tmpfs mounts, and
// can reach volumes (docs/decisions/004-session-volume-and-file-sync.md).
export function sessionVolumeOptions(spec: SandboxSpec, name: string) {
  return {
    Name: name,
    Driver: 'local',
    DriverOpts: {
      type: 'tmpfs',
      device: 'tmpfs',
      o: `size=${spec.limits.sessionDiskMb}m,uid=${SANDBOX_UID},gid=${SANDBOX_UID},mode=0700,nosuid,nodev`,
    },
    Labels: sandboxLabels(spec),
  };
}

export function sandboxLabels(spec: SandboxSpec): Record<string, string> {
  return {
    [LABEL_SESSION]: spec.sessionId,
    [LABEL_TENANT]: spec.tenantId,
    [LABEL_WORKER]: spec.workerId,
  };
}

// The isolation every sandbox gets, whatever the caller asked for. Nothing here is
// caller-controlled except sizes, which arrive already clamped.
// `session` is the tmpfs volume's name, or for `bind` storage the host folder, or
// `memory`: a tmpfs of the container itself (the gvisor tier: gVisor keeps it in the
// sandbox's memory, so a checkpoint saves it with the processes; decision 018).
// What the container runs under besides the image: the seccomp profile (JSON) and, when
// the operator names one, the OCI runtime.
export type SessionStorageMount = { volume: string } | { hostDir: string } | { memory: true };

export interface SandboxHardening {
  seccompProfileJson: string;
  runtime?: string;
}

// What the image runs besides the REPL's defaults: Python modules its zygote imports once
// for every interpreter it forks (SANDBOX_PRELOAD_MODULES).
export interface SandboxTuning {
  preloadModules?: readonly string[];
  // A template's sandbox: the volume of the platform's runtime and supervisor, mounted
  // read-only over the image's /opt/drydock (templates/platform-runtime-volume.ts).
  platformRuntimeVolume?: string;
}

export function sandboxContainerOptions(
  spec: SandboxSpec,
  image: string,
  session: SessionStorageMount,
  hardening: SandboxHardening,
  tuning: SandboxTuning = {},
  // The host folder of the socket channel (owned by SUPERVISOR_UID, mode 0700); unset:
  // the attached stdin/stdout.
  channelHostDir?: string,
): ContainerCreateOptions {
  const { limits } = spec;
  const mounts: NonNullable<NonNullable<ContainerCreateOptions['HostConfig']>['Mounts']> = [
    ...('volume' in session
      ? [{ Type: 'volume' as const, Source: session.volume, Target: '/session', ReadOnly: false }]
      : 'hostDir' in session
        ? [{ Type: 'bind' as const, Source: session.hostDir, Target: '/session', ReadOnly: false, BindOptions: { Propagation: 'rprivate' as const } }]
        : []),
    // Operator datasets: read-only, nothing below them is writable whatever the modes.
    ...(spec.readOnlyMounts ?? []).map((m) => ({
      Type: 'bind' as const,
      Source: m.hostPath,
      Target: `/data/${m.name}`,
      ReadOnly: true,
      BindOptions: { Propagation: 'rprivate' as const },
    })),
    ...(channelHostDir
      ? [{ Type: 'bind' as const, Source: channelHostDir, Target: CHANNEL_MOUNT, ReadOnly: false, BindOptions: { Propagation: 'rprivate' as const } }]
      : []),
    ...(tuning.platformRuntimeVolume
      ? [{ Type: 'volume' as const, Source: tuning.platformRuntimeVolume, Target: '/opt/drydock', ReadOnly: true, VolumeOptions: { NoCopy: true } as never }]
      : []),
  ];
  const memoryBytes = limits.memoryMb * 1024 * 1024;
  const egress = Boolean(spec.network && channelHostDir);
  const baseEnv = [
    'HOME=/session',
    'LANG=C.UTF-8',
    'PATH=/usr/local/bin:/usr/bin:/bin',
  ];
  if (egress) baseEnv.splice(2, 1);
  return {
    Image: image,
    Cmd: SANDBOX_COMMAND,
    // Root only until the supervisor sets its ids (its first act): it then has no
    // capability left, and user code runs as SANDBOX_UID.
    User: '0:0',
    WorkingDir: '/session',
    // A minimal environment: no platform secret or host variable ever enters.
    Env: [
      ...baseEnv,
      'MPLBACKEND=Agg',
      'MPLCONFIGDIR=/tmp/.matplotlib',
      'PYTHONDONTWRITEBYTECODE=1',
      // Empty, over whatever a template's image said: nothing is preloaded into the
      // supervisor or found before its own libraries.
      'LD_PRELOAD=',
      'LD_LIBRARY_PATH=',
      `DRYDOCK_SANDBOX_UID=${SANDBOX_UID}`,
      `DRYDOCK_SUPERVISOR_UID=${SUPERVISOR_UID}`,
      ...(tuning.preloadModules?.length ? [`DRYDOCK_ZYGOTE_PRELOAD=${tuning.preloadModules.join(',')}`] : []),
      ...(channelHostDir ? [`DRYDOCK_CHANNEL_SOCKET=${CHANNEL_MOUNT}/${CHANNEL_SOCKET_NAME}`] : []),
      ...(egress ? egressEnvironment() : []),
    ],
    Labels: sandboxLabels(spec),
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    OpenStdin: true,
    StdinOnce: false,
    Tty: false,
    NetworkDisabled: true,
    HostConfig: {
      NetworkMode: 'none',
      ReadonlyRootfs: true,
      Mounts: mounts,
      // noexec as Docker mounts a tmpfs by default, said here so that it stays: programs
      // the code writes run from /session, the thread's own folder.
      Tmpfs: {
        '/tmp': `rw,noexec,nosuid,nodev,size=${limits.tmpDiskMb}m,uid=${SANDBOX_UID},gid=${SANDBOX_UID},mode=1777`,
        // exec: Docker's tmpfs default is noexec, and programs the code writes run from here.
        ...('memory' in session ? { '/session': `rw,exec,nosuid,nodev,size=${limits.sessionDiskMb}m,uid=${SANDBOX_UID},gid=${SANDBOX_UID},mode=0700` } : {}),
        // Installed packages run (native extensions are mapped executable), so not noexec.
        ...(egress ? { [PACKAGES_DIR]: `rw,nosuid,nodev,size=${limits.sessionDiskMb}m,uid=${SANDBOX_UID},gid=${SANDBOX_UID},mode=0755` } : {}),
      },
      MaskedPaths: MASKED_PATHS,
      // Just what setting the supervisor's ids takes; gone once they are set.
      CapDrop: ['ALL'],
      CapAdd: ['SETUID', 'SETGID'],
      SecurityOpt: ['no-new-privileges:true', `seccomp=${hardening.seccompProfileJson}`],
      ...(hardening.runtime ? { Runtime: hardening.runtime } : {}),
      Privileged: false,
      PidsLimit: limits.pids,
      Memory: memoryBytes,
      MemorySwap: memoryBytes,
      NanoCpus: Math.round(limits.cpus * 1e9),
      Init: true,
      IpcMode: 'private',
      Ulimits: [
        { Name: 'nofile', Soft: 1024, Hard: 1024 },
        { Name: 'core', Soft: 0, Hard: 0 },
      ],
      RestartPolicy: { Name: 'no' },
      AutoRemove: false,
      LogConfig: { Type: 'none', Config: {} },
    },
  };
}
