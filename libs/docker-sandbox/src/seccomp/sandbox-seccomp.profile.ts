// The seccomp profile of every sandbox container (docs/security.md, "System calls"): an
// allowlist in the spirit of Docker's default profile for an unprivileged container,
// without the calls Docker allows that a sandbox has no use for and that reach across
// processes or into the kernel. Whatever is not listed fails with EPERM.

// What Docker's default profile allows to a container without added capabilities, less
// the denials below.
const ALLOWED = [
  'accept', 'accept4', 'access', 'adjtimex', 'alarm', 'bind', 'brk', 'cachestat', 'capget', 'capset', 'chdir', 'chmod',
  'chown', 'chown32', 'clock_adjtime', 'clock_adjtime64', 'clock_getres', 'clock_getres_time64', 'clock_gettime',
  'clock_gettime64', 'clock_nanosleep', 'clock_nanosleep_time64', 'close', 'close_range', 'connect', 'copy_file_range',
  'creat', 'dup', 'dup2', 'dup3', 'epoll_create', 'epoll_create1', 'epoll_ctl', 'epoll_ctl_old', 'epoll_pwait',
  'epoll_pwait2', 'epoll_wait', 'epoll_wait_old', 'eventfd', 'eventfd2', 'execve', 'execveat', 'exit', 'exit_group',
  'faccessat', 'faccessat2', 'fadvise64', 'fadvise64_64', 'fallocate', 'fanotify_mark', 'fchdir', 'fchmod', 'fchmodat',
  'fchmodat2', 'fchown', 'fchown32', 'fchownat', 'fcntl', 'fcntl64', 'fdatasync', 'fgetxattr', 'flistxattr', 'flock',
  'fork', 'fremovexattr', 'fsetxattr', 'fstat', 'fstat64', 'fstatat64', 'fstatfs', 'fstatfs64', 'fsync', 'ftruncate',
  'ftruncate64', 'futex', 'futex_requeue', 'futex_time64', 'futex_wait', 'futex_waitv', 'futex_wake', 'futimesat',
  'getcpu', 'getcwd', 'getdents', 'getdents64', 'getegid', 'getegid32', 'geteuid', 'geteuid32', 'getgid', 'getgid32',
  'getgroups', 'getgroups32', 'getitimer', 'getpeername', 'getpgid', 'getpgrp', 'getpid', 'getppid', 'getpriority',
  'getrandom', 'getresgid', 'getresgid32', 'getresuid', 'getresuid32', 'getrlimit', 'get_robust_list', 'getrusage',
  'getsid', 'getsockname', 'getsockopt', 'get_thread_area', 'gettid', 'gettimeofday', 'getuid', 'getuid32', 'getxattr',
  'inotify_add_watch', 'inotify_init', 'inotify_init1', 'inotify_rm_watch', 'io_cancel', 'ioctl', 'io_destroy',
  'io_getevents', 'io_pgetevents', 'io_pgetevents_time64', 'ioprio_get', 'ioprio_set', 'io_setup', 'io_submit', 'ipc',
  'kill', 'lchown', 'lchown32', 'lgetxattr', 'link', 'linkat', 'listen', 'listxattr', 'llistxattr', '_llseek',
  'lremovexattr', 'lseek', 'lsetxattr', 'lstat', 'lstat64', 'madvise', 'map_shadow_stack', 'membarrier', 'memfd_create',
  'mincore', 'mkdir', 'mkdirat', 'mknod', 'mknodat', 'mlock', 'mlock2', 'mlockall', 'mmap', 'mmap2', 'mprotect',
  'mq_getsetattr', 'mq_notify', 'mq_open', 'mq_timedreceive', 'mq_timedreceive_time64', 'mq_timedsend',
  'mq_timedsend_time64', 'mq_unlink', 'mremap', 'msgctl', 'msgget', 'msgrcv', 'msgsnd', 'msync', 'munlock',
  'munlockall', 'munmap', 'nanosleep', 'newfstatat', '_newselect', 'open', 'openat', 'openat2', 'pause', 'pidfd_open',
  'pidfd_send_signal', 'pipe', 'pipe2', 'pkey_alloc', 'pkey_free', 'pkey_mprotect', 'poll', 'ppoll', 'ppoll_time64',
  'prctl', 'pread64', 'preadv', 'preadv2', 'prlimit64', 'process_mrelease', 'pselect6', 'pselect6_time64', 'pwrite64',
  'pwritev', 'pwritev2', 'read', 'readahead', 'readlink', 'readlinkat', 'readv', 'recv', 'recvfrom', 'recvmmsg',
  'recvmmsg_time64', 'recvmsg', 'remap_file_pages', 'removexattr', 'rename', 'renameat', 'renameat2', 'restart_syscall',
  'rmdir', 'rseq', 'rt_sigaction', 'rt_sigpending', 'rt_sigprocmask', 'rt_sigqueueinfo', 'rt_sigreturn',
  'rt_sigsuspend', 'rt_sigtimedwait', 'rt_sigtimedwait_time64', 'rt_tgsigqueueinfo', 'sched_getaffinity',
  'sched_getattr', 'sched_getparam', 'sched_get_priority_max', 'sched_get_priority_min', 'sched_getscheduler',
  'sched_rr_get_interval', 'sched_rr_get_interval_time64', 'sched_setaffinity', 'sched_setattr', 'sched_setparam',
  'sched_setscheduler', 'sched_yield', 'seccomp', 'select', 'semctl', 'semget', 'semop', 'semtimedop',
  'semtimedop_time64', 'send', 'sendfile', 'sendfile64', 'sendmmsg', 'sendmsg', 'sendto', 'setfsgid', 'setfsgid32',
  'setfsuid', 'setfsuid32', 'setgid', 'setgid32', 'setgroups', 'setgroups32', 'setitimer', 'setpgid', 'setpriority',
  'setregid', 'setregid32', 'setresgid', 'setresgid32', 'setresuid', 'setresuid32', 'setreuid', 'setreuid32',
  'setrlimit', 'set_robust_list', 'setsid', 'setsockopt', 'set_thread_area', 'set_tid_address', 'setuid', 'setuid32',
  'setxattr', 'shmat', 'shmctl', 'shmdt', 'shmget', 'shutdown', 'sigaltstack', 'signalfd', 'signalfd4', 'sigprocmask',
  'sigreturn', 'socketpair', 'splice', 'stat', 'stat64', 'statfs', 'statfs64', 'statx',
  'symlink', 'symlinkat', 'sync', 'sync_file_range', 'syncfs', 'sysinfo', 'tee', 'tgkill', 'time', 'timer_create',
  'timer_delete', 'timer_getoverrun', 'timer_gettime', 'timer_gettime64', 'timer_settime', 'timer_settime64',
  'timerfd_create', 'timerfd_gettime', 'timerfd_gettime64', 'timerfd_settime', 'timerfd_settime64', 'times', 'tkill',
  'truncate', 'truncate64', 'ugetrlimit', 'umask', 'uname', 'unlink', 'unlinkat', 'utime', 'utimensat',
  'utimensat_time64', 'utimes', 'vfork', 'vmsplice', 'wait4', 'waitid', 'waitpid', 'write', 'writev',
] as const;

// Denied on purpose, each with the reason (also the table in docs/security.md). Some are
// allowed by Docker's default profile, the others only with a capability a sandbox never
// has: listed so that the profile says it, whatever capabilities change later.
export const DENIED_SYSCALLS: Record<string, string> = {
  ptrace: 'attach to, read or write another process (the supervisor, init, the kernel of another run)',
  process_vm_readv: "read another process's memory without ptrace",
  process_vm_writev: "write another process's memory without ptrace",
  pidfd_getfd: "copy a file descriptor out of another process (the supervisor's host channel)",
  kcmp: 'compare kernel objects of two processes: an oracle on the supervisor',
  process_madvise: "act on another process's memory",
  personality: 'switch the execution domain (e.g. turn off address-space randomisation)',
  keyctl: 'kernel keyrings are shared beyond the container',
  add_key: 'kernel keyrings are shared beyond the container',
  request_key: 'kernel keyrings are shared beyond the container',
  bpf: 'load programs into the kernel',
  userfaultfd: 'a classic building block of kernel exploits (stalling the kernel on a page fault)',
  perf_event_open: 'kernel profiling: side channels and a history of kernel bugs',
  io_uring_setup: 'an asynchronous syscall path seccomp cannot filter, with a history of kernel bugs',
  io_uring_enter: 'as io_uring_setup',
  io_uring_register: 'as io_uring_setup',
  unshare: 'new namespaces (user namespaces widen the kernel surface)',
  setns: 'join other namespaces',
  mount: 'mount filesystems',
  umount2: 'unmount filesystems',
  pivot_root: 'change the root filesystem',
  chroot: 'change the root directory',
  open_by_handle_at: 'open files by handle, outside the container (the "shocker" escape)',
  name_to_handle_at: 'the other half of open_by_handle_at',
  fanotify_init: 'watch filesystem events beyond the container',
  memfd_secret: 'memory hidden from the kernel: nothing a sandbox needs',
  mbind: 'NUMA memory placement (CAP_SYS_NICE)',
  set_mempolicy: 'NUMA memory policy (CAP_SYS_NICE)',
  move_pages: "move another process's pages",
  migrate_pages: "move another process's pages",
  init_module: 'load kernel modules',
  finit_module: 'load kernel modules',
  delete_module: 'unload kernel modules',
  kexec_load: 'load a new kernel',
  kexec_file_load: 'load a new kernel',
  reboot: 'reboot the host',
  swapon: 'host swap',
  swapoff: 'host swap',
  acct: 'process accounting of the host',
  syslog: "the host kernel's log",
  quotactl: 'host disk quotas',
  settimeofday: 'the host clock',
  clock_settime: 'the host clock',
  clock_settime64: 'the host clock',
  stime: 'the host clock',
  iopl: 'raw I/O ports',
  ioperm: 'raw I/O ports',
  vhangup: 'hang up the terminal',
  lookup_dcookie: 'kernel profiling internals',
  nfsservctl: 'the kernel NFS server',
  uselib: 'an obsolete loader call with a history of bugs',
  sysfs: 'an obsolete call',
  _sysctl: 'an obsolete call',
  ustat: 'an obsolete call',
  mount_setattr: 'mount attributes',
  fsopen: 'the new mount API',
  fsconfig: 'the new mount API',
  fsmount: 'the new mount API',
  fspick: 'the new mount API',
  move_mount: 'the new mount API',
  open_tree: 'the new mount API',
  quotactl_fd: 'host disk quotas',
  landlock_create_ruleset: 'not needed by a sandbox',
  landlock_add_rule: 'not needed by a sandbox',
  landlock_restrict_self: 'not needed by a sandbox',
  // Only reachable through a 32-bit ABI, which the profile does not admit at all (archMap
  // below); named here so the profile says it wherever an ABI adds it back.
  socketcall: "every socket call in one, its arguments in memory seccomp cannot read (socket(AF_VSOCK) past the filter)",
};

// clone() is allowed without namespace flags only (CLONE_NEWNS | NEWCGROUP | NEWUTS |
// NEWIPC | NEWUSER | NEWPID | NEWNET); clone3 answers ENOSYS, so the C library falls
// back to clone, whose flags can be checked.
const CLONE_NAMESPACE_FLAGS = 0x7e020000;
// socket() in every address family but AF_VSOCK: a channel to the hypervisor or the
// host, past `NetworkMode: none` (as Docker's default profile).
const AF_VSOCK = 40;
const ENOSYS = 38;
const EPERM = 1;

export const SANDBOX_SECCOMP_PROFILE = {
  defaultAction: 'SCMP_ACT_ERRNO',
  defaultErrnoRet: EPERM,
  // The native ABI only. Docker's default profile also admits the 32-bit ones (x86 and
  // x32 on x86_64, arm on arm64); through them a call has other numbers and other
  // forms: i386's socketcall carries socket()'s arguments in memory, where seccomp
  // cannot check the AF_VSOCK rule below. Nothing in a sandbox is a 32-bit program, so a
  // call through those ABIs fails whatever it is (docs/security.md, "System calls").
  archMap: [
    { architecture: 'SCMP_ARCH_X86_64', subArchitectures: [] },
    { architecture: 'SCMP_ARCH_AARCH64', subArchitectures: [] },
  ],
  syscalls: [
    { names: [...ALLOWED], action: 'SCMP_ACT_ALLOW' },
    { names: ['socket'], action: 'SCMP_ACT_ALLOW', args: [{ index: 0, value: AF_VSOCK, valueTwo: 0, op: 'SCMP_CMP_NE' }] },
    { names: ['arch_prctl', 'modify_ldt'], action: 'SCMP_ACT_ALLOW', includes: { arches: ['amd64'] } },
    // What the C library needs on ARM hosts (as Docker's default profile).
    {
      names: ['arm_fadvise64_64', 'arm_sync_file_range', 'sync_file_range2', 'breakpoint', 'cacheflush', 'set_tls'],
      action: 'SCMP_ACT_ALLOW',
      includes: { arches: ['arm64'] },
    },
    {
      names: ['clone'],
      action: 'SCMP_ACT_ALLOW',
      args: [{ index: 0, value: CLONE_NAMESPACE_FLAGS, valueTwo: 0, op: 'SCMP_CMP_MASKED_EQ' }],
      excludes: { arches: ['s390', 's390x'] },
    },
    { names: ['clone3'], action: 'SCMP_ACT_ERRNO', errnoRet: ENOSYS },
    { names: Object.keys(DENIED_SYSCALLS), action: 'SCMP_ACT_ERRNO', errnoRet: EPERM },
  ],
} as const;
