import WebSocket from 'ws';

// A terminal of GET /v1/sessions/:id/pty driven as a person would: what it shows is
// collected, `until` waits for a text on screen, `exit` for the exit message.
export class TerminalClient {
  shown = '';
  readonly messages: Record<string, unknown>[] = [];
  closeCode: number | null = null;
  private readonly waiters = new Set<() => void>();

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) this.shown += data.toString('utf8');
      else this.messages.push(JSON.parse(data.toString('utf8')) as Record<string, unknown>);
      this.wake();
    });
    socket.on('close', (code: number) => {
      this.closeCode = code;
      this.wake();
    });
  }

  // Opens it, or resolves with the handshake's HTTP refusal (status and JSON body).
  static open(url: string, headers: Record<string, string> = {}): Promise<TerminalClient | { status: number; body: any }> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url.replace(/^http/, 'ws'), { headers });
      socket.once('open', () => resolve(new TerminalClient(socket)));
      socket.once('unexpected-response', (_request, response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
      });
      socket.once('error', reject);
    });
  }

  type(text: string): void {
    this.socket.send(Buffer.from(text, 'utf8'), { binary: true });
  }

  send(message: unknown): void {
    this.socket.send(JSON.stringify(message));
  }

  until(needle: string | RegExp, timeoutMs = 20_000): Promise<string> {
    const found = () => (typeof needle === 'string' ? this.shown.includes(needle) : needle.test(this.shown));
    return this.wait(found, timeoutMs, () => `${String(needle)} not shown; the terminal showed ${JSON.stringify(this.shown.slice(-2000))}`).then(() => this.shown);
  }

  message(type: string, timeoutMs = 20_000): Promise<Record<string, unknown>> {
    return this.wait(() => this.messages.some((m) => m.type === type), timeoutMs, () => `no ${type} message; got ${JSON.stringify(this.messages)}`).then(
      () => this.messages.find((m) => m.type === type)!,
    );
  }

  closed(timeoutMs = 20_000): Promise<number> {
    return this.wait(() => this.closeCode !== null, timeoutMs, () => 'the socket did not close').then(() => this.closeCode!);
  }

  close(): void {
    this.socket.close();
  }

  private wait(done: () => boolean, timeoutMs: number, why: () => string): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!done()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(why()));
      }, timeoutMs);
      this.waiters.add(check);
    });
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}
