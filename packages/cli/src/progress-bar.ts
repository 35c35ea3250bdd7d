import type { Output } from './io.js';
import { formatDuration } from './output.js';

export interface Progress {
  // Items that ended, whatever their status.
  done: number;
  // Of those, the ones that did not end ok (error, timeout, memory, killed).
  failed: number;
  cancelled: number;
  total: number;
}

export interface ProgressOptions {
  // A terminal gets one line redrawn in place; a log file or pipe gets a line now and then.
  tty: boolean;
  columns?: number;
  // Redraws at most this often (a terminal flickers and a slow SSH link lags beyond ~10/s).
  minRedrawMs?: number;
  // How often a plain progress line is printed when stderr is not a terminal.
  plainEveryMs?: number;
  now?: () => number;
}

// Rate over the whole wait (the first sample is the baseline, so items that were already
// done when we attached do not inflate it); ETA from that rate.
export function describe(progress: Progress, elapsedMs: number, baseline: number): { rate: number | null; etaSeconds: number | null } {
  const seconds = elapsedMs / 1000;
  const rate = seconds >= 0.5 ? (progress.done - baseline) / seconds : null;
  const remaining = progress.total - progress.done;
  const etaSeconds = remaining === 0 ? 0 : rate && rate > 0 ? remaining / rate : null;
  return { rate, etaSeconds };
}

// "312/500 done  2 failed  41.2 items/s  ETA 5s": shared by the bar and the plain line.
export function summary(progress: Progress, rate: number | null, etaSeconds: number | null): string {
  const parts = [`${progress.done}/${progress.total} done`, `${progress.failed} failed`];
  if (progress.cancelled > 0) parts.push(`${progress.cancelled} cancelled`);
  parts.push(rate === null ? '-- items/s' : `${rate.toFixed(rate < 10 ? 1 : 0)} items/s`);
  parts.push(`ETA ${etaSeconds === null ? '--' : formatDuration(etaSeconds)}`);
  return parts.join('  ');
}

export function renderBar(progress: Progress, rate: number | null, etaSeconds: number | null, columns = 80): string {
  return bar(progress.done, progress.total, summary(progress, rate, etaSeconds), columns);
}

// "[████░░░░] text": whatever room the text leaves, between 10 and maxWidth cells; none on
// a very narrow terminal. Also drawn by the template build's progress.
export function bar(done: number, total: number, text: string, columns = 80, maxWidth = 40): string {
  const width = Math.min(maxWidth, columns - text.length - 4);
  if (width < 10) return text.slice(0, Math.max(0, columns - 1));
  const filled = total > 0 ? Math.floor((Math.min(done, total) / total) * width) : width;
  return `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${text}`;
}

// Draws a batch's progress on stderr: in place with \r on a terminal, throttled; as
// occasional lines otherwise (CI logs must not fill with carriage returns).
export class ProgressReporter {
  private readonly started: number;
  private readonly now: () => number;
  private baseline: number | null = null;
  private latest: Progress | null = null;
  private lastDraw = Number.NEGATIVE_INFINITY;
  private pending: NodeJS.Timeout | null = null;
  private drewInPlace = false;
  private lastFrame = '';
  private readonly interval: number;
  // Redraws while no update comes (long items), so the rate and ETA stay current and a log
  // still gets its line every few seconds. unref: it never keeps the process alive.
  private readonly ticker: NodeJS.Timeout;

  constructor(
    private readonly out: Output,
    private readonly options: ProgressOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.started = this.now();
    this.interval = options.tty ? (options.minRedrawMs ?? 100) : (options.plainEveryMs ?? 5000);
    this.ticker = setInterval(() => this.drawIfDue(), Math.max(this.interval, 1000)).unref();
  }

  update(progress: Progress): void {
    this.baseline ??= progress.done;
    this.latest = progress;
    // A terminal also gets the last update of a burst, shortly after (never more often).
    if (!this.drawIfDue() && this.options.tty && !this.pending) {
      this.pending = setTimeout(() => this.draw(), this.interval - (this.now() - this.lastDraw));
    }
  }

  private drawIfDue(): boolean {
    if (!this.latest || this.now() - this.lastDraw < this.interval) return false;
    this.draw();
    return true;
  }

  // The last frame, then a newline so that what follows starts on its own line.
  finish(progress?: Progress): void {
    if (progress) {
      this.baseline ??= progress.done;
      this.latest = progress;
    }
    if (this.latest) this.draw();
    this.stop();
  }

  // Leaves the line as it is (Ctrl-C, an error) and moves below it.
  stop(): void {
    clearInterval(this.ticker);
    if (this.pending) clearTimeout(this.pending);
    this.pending = null;
    if (this.drewInPlace) this.out.write('\n');
    this.drewInPlace = false;
  }

  private draw(): void {
    if (this.pending) clearTimeout(this.pending);
    this.pending = null;
    if (!this.latest) return;
    this.lastDraw = this.now();
    const { rate, etaSeconds } = describe(this.latest, this.lastDraw - this.started, this.baseline ?? 0);
    // \x1b[K clears what a longer previous frame left at the end of the line.
    const frame = this.options.tty
      ? `\r${renderBar(this.latest, rate, etaSeconds, this.options.columns)}\x1b[K`
      : `progress: ${summary(this.latest, rate, etaSeconds)}\n`;
    // The final state often arrives twice (last event, then the record): draw it once.
    if (frame === this.lastFrame) return;
    this.lastFrame = frame;
    this.out.write(frame);
    this.drewInPlace ||= Boolean(this.options.tty);
  }
}
