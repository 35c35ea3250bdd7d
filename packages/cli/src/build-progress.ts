import type { Output } from './io.js';
import { formatDuration } from './output.js';
import { bar } from './progress-bar.js';

// Where a template build is, read from its log lines (docs/api.md "Templates"): the
// Dockerfile's steps ("Step 2/3 : RUN …"), then the platform's layer (steps of its own),
// the self-test and the push.
export interface BuildState {
  // Of the Dockerfile's steps: those finished, of all of them (0/0 before the first).
  done: number;
  total: number;
  // What runs now: "Step 2/3 : RUN apt-get …", "self-test", …
  label: string;
  // The same, short, for a plain progress line: "step 2/3", "self-test", …
  short: string;
  // Past the Dockerfile: its steps are the platform's.
  platformLayer: boolean;
}

export const QUEUED: BuildState = { done: 0, total: 0, label: 'waiting for a worker', short: 'waiting for a worker', platformLayer: false };

const STEP = /^Step (\d+)\/(\d+) : (.*)$/;

// The state after one more line of the log.
export function nextState(state: BuildState, line: string): BuildState {
  const step = STEP.exec(line);
  if (step) {
    const [n, m] = [Number(step[1]), Number(step[2])];
    // A plain log gets one progress line for the whole platform layer.
    if (state.platformLayer) return { ...state, label: `platform layer ${n}/${m}` };
    return { ...state, done: n - 1, total: m, label: line, short: `step ${n}/${m}` };
  }
  const at = (label: string) => ({ ...state, done: state.total, label, short: label });
  if (line.startsWith('drydock: building ')) return { ...state, label: 'starting', short: 'starting' };
  if (line === 'drydock: adding the platform layer') return { ...at('adding the platform layer'), platformLayer: true };
  if (line.startsWith('drydock: self-test')) return at('self-test');
  if (line.startsWith('drydock: pushing ')) return at('pushing to the registry');
  if (line.startsWith('drydock: ready as ')) return at('ready');
  if (line.startsWith('drydock: failed: ')) return { ...state, label: 'failed', short: 'failed' };
  return state;
}

export interface BuildProgressOptions {
  // A terminal gets a progress line kept below the log, redrawn in place; a pipe or a log
  // file gets a plain `progress:` line each time the build moves on.
  tty: boolean;
  columns?: number;
  minRedrawMs?: number;
  now?: () => number;
}

// The build's log on stderr as it comes, with its progress.
export class BuildProgress {
  private state = QUEUED;
  private readonly started: number;
  private readonly now: () => number;
  private readonly interval: number;
  private lastDraw = Number.NEGATIVE_INFINITY;
  private pending: NodeJS.Timeout | null = null;
  private shown = false;
  // Redraws while no line comes (a long RUN), so the elapsed time stays current.
  private readonly ticker: NodeJS.Timeout | null;

  constructor(
    private readonly out: Output,
    private readonly options: BuildProgressOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.started = this.now();
    this.interval = options.minRedrawMs ?? 100;
    this.ticker = options.tty ? setInterval(() => this.draw(), 1000).unref() : null;
    if (options.tty) this.draw();
    else this.out.write(`progress: ${this.state.short}\n`);
  }

  line(text: string): void {
    const before = this.state;
    this.state = nextState(this.state, text);
    if (!this.options.tty) {
      this.out.write(`${text}\n`);
      if (this.state.short !== before.short) this.out.write(`progress: ${this.state.short}  ${this.elapsed()}\n`);
      return;
    }
    // The progress line gives way to the log line, and comes back below it (at most
    // every interval: a burst of lines redraws once, shortly after).
    this.out.write(`${this.shown ? '\r\x1b[K' : ''}${text}\n`);
    this.shown = false;
    if (this.now() - this.lastDraw >= this.interval) this.draw();
    else this.pending ??= setTimeout(() => this.draw(), this.interval);
  }

  // Removes the progress line (a terminal's) and stops redrawing.
  finish(): void {
    if (this.ticker) clearInterval(this.ticker);
    if (this.pending) clearTimeout(this.pending);
    this.pending = null;
    if (this.shown) this.out.write('\r\x1b[K');
    this.shown = false;
  }

  // "[████████░░░░] Step 2/3 : RUN apt-get update …  12s", fitted to the terminal.
  render(columns = this.options.columns ?? 80): string {
    const elapsed = `  ${this.elapsed()}`;
    // A fixed 20-cell bar; the label is cut to the room it leaves.
    const room = Math.max(10, columns - 1 - 23 - elapsed.length);
    const label = this.state.label.length > room ? `${this.state.label.slice(0, room - 1)}…` : this.state.label;
    // Before the first step the bar is empty, not full.
    const [done, total] = this.state.total > 0 ? [this.state.done, this.state.total] : [0, 1];
    return bar(done, total, label + elapsed, columns, 20);
  }

  private draw(): void {
    if (this.pending) clearTimeout(this.pending);
    this.pending = null;
    this.lastDraw = this.now();
    this.out.write(`\r${this.render()}\x1b[K`);
    this.shown = true;
  }

  private elapsed(): string {
    return formatDuration((this.now() - this.started) / 1000);
  }
}
