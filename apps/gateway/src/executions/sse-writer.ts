import type { ServerResponse } from 'node:http';
import type { TakenReply } from '../http/taken-reply.js';

// Event data already serialized: the UTF-8 bytes of its JSON (which JSON.stringify
// writes without a line break, as an SSE data line needs), written as they are.
export class SerializedJson {
  constructor(readonly bytes: Buffer) {}

  // Anything that stringifies an event instead of sending it gets the same JSON.
  toJSON(): unknown {
    return JSON.parse(this.bytes.toString('utf8'));
  }
}

const EVENT_END = Buffer.from('\n\n');

// Writes server-sent events, sending the headers with the first event so that a
// failure before any output can still be answered with a plain JSON error.
export class SseWriter {
  private headersSent = false;
  private readonly res: ServerResponse;

  constructor(private readonly reply: TakenReply) {
    this.res = reply.raw;
  }

  get started(): boolean {
    return this.headersSent;
  }

  // Sends the headers (and an SSE comment line, which clients skip) now, for a stream
  // whose first event may be a while coming.
  open(): void {
    this.startIfNeeded();
    this.res.write(': open\n\n');
  }

  send(event: string, data: unknown): void {
    this.startIfNeeded();
    if (data instanceof SerializedJson) {
      // Three writes leaving together (one writev), so the state's bytes are not copied.
      this.res.cork();
      this.res.write(`event: ${event}\ndata: `);
      this.res.write(data.bytes);
      this.res.write(EVENT_END);
      this.res.uncork();
      return;
    }
    this.res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  private startIfNeeded(): void {
    if (this.headersSent) return;
    this.reply.hijack();
    this.res.statusCode = 200;
    this.res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    this.res.setHeader('Cache-Control', 'no-cache, no-transform');
    this.res.setHeader('Connection', 'keep-alive');
    this.res.setHeader('X-Accel-Buffering', 'no');
    this.res.flushHeaders();
    this.headersSent = true;
  }

  end(): void {
    this.res.end();
  }
}
