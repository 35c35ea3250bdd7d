// Why the run's own controller aborted it when its heartbeat found the thread gone.
const THREAD_LOST = Symbol('thread lost');

// What stops a run before its end: its client going (`client`), or a heartbeat finding
// the thread no longer held by the run (deleted, with its tenant or alone, or taken over
// after a stale hold). Nothing the run does from then on could be kept, and its model
// calls and tool runs cost the tenant.
//
// One plain controller for both rather than AbortSignal.any, which Node keeps alive for
// as long as an abort listener is attached to it: the run's own listener goes with the
// run (end()).
export class RunStop {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  // A heartbeat answered after the run's release (another connection) finds the row
  // freed: it no longer means anything.
  private ended = false;

  constructor(
    private readonly client: AbortSignal,
    // Whether the thread's row still names the run; asked every `periodMs`.
    heartbeat: () => Promise<boolean>,
    periodMs: number,
    log: { lost(): void; failed(error: unknown): void },
  ) {
    client.addEventListener('abort', this.onClientGone, { once: true });
    if (client.aborted) this.onClientGone();
    this.timer = setInterval(() => {
      heartbeat().then(
        (held) => {
          if (held || this.ended || this.controller.signal.aborted) return;
          log.lost();
          this.controller.abort(THREAD_LOST);
        },
        (error: unknown) => log.failed(error),
      );
    }, periodMs);
    this.timer.unref();
  }

  // Aborted when the run must stop; what the graph runs with.
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  // Stopped because the thread is no longer the run's.
  get lostThread(): boolean {
    return this.controller.signal.reason === THREAD_LOST;
  }

  // Stopped because the client went.
  get cancelled(): boolean {
    return this.client.aborted;
  }

  // The run is over: no more heartbeats, and the client's signal is let go.
  end(): void {
    this.ended = true;
    clearInterval(this.timer);
    this.client.removeEventListener('abort', this.onClientGone);
  }

  private readonly onClientGone = () => this.controller.abort(this.client.reason);
}
