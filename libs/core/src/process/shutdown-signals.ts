// The signals that shut a gateway or a worker down the orderly way (a worker drains
// first): SIGTERM (scripts/stop.sh, Docker, Kubernetes), SIGINT (Ctrl-C) and SIGHUP (the
// terminal that started it went away).
//
// Not Nest's default, which is every signal it knows, SIGUSR2 among them: Node's own
// diagnostics take that one (`--heapsnapshot-signal=SIGUSR2` writes a heap snapshot,
// bench/agent/turn-trace.ts writes its table), and under the default the process then
// shut itself down right after the snapshot. Nor SIGQUIT, SIGABRT, SIGSEGV and the like,
// whose own behaviour (a core dump, the crash report) a shutdown hook only hides.
export const SHUTDOWN_SIGNALS: string[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];
