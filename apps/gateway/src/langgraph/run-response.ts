import type { ServerResponse } from 'node:http';
import { chunksLength, endWithChunks } from '@drydock/core';
import type { TakenReply } from '../http/taken-reply.js';

// Aborted when the client goes away before the response is complete: the run stops
// (there are no background runs to come back to).
export function abortOnClose(res: ServerResponse): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) controller.abort();
  };
  res.on('close', onClose);
  return { signal: controller.signal, dispose: () => res.off('close', onClose) };
}

// runs/wait may take minutes. If the run has not finished after `intervalMs`, the 200
// headers go out and a newline follows every `intervalMs` (JSON allows leading
// whitespace), so that proxies and clients do not drop an idle connection. A failure
// after that point can no longer change the status: it is sent in the body as
// {"__error__": {error, message}}, which @langchain/langgraph-sdk raises as an error.
export class JsonKeepAlive {
  private timer: NodeJS.Timeout;
  private readonly res: ServerResponse;

  constructor(
    private readonly reply: TakenReply,
    intervalMs: number,
  ) {
    this.res = reply.raw;
    this.timer = setInterval(() => this.ping(), intervalMs);
    this.timer.unref();
  }

  get started(): boolean {
    return this.res.headersSent;
  }

  finish(body: unknown): void {
    this.finishJson(JSON.stringify(body));
  }

  // The answer, already serialized, whole or as chunks to send one after the other (a
  // conversation's bytes as the message cache holds them, not copied into one buffer).
  // Written as is: no ETag (a run is a POST, and hashing the thread's whole state cost as
  // much as serializing it).
  finishJson(json: string | Buffer | readonly Buffer[]): void {
    this.stop();
    if (this.res.writableEnded || this.res.destroyed) return;
    const chunks = typeof json === 'string' || Buffer.isBuffer(json) ? [json] : json;
    if (!this.res.headersSent) {
      this.reply.hijack();
      this.res.statusCode = 200;
      this.res.setHeader('Content-Type', 'application/json; charset=utf-8');
      this.res.setHeader('Content-Length', chunksLength(chunks));
    }
    if (chunks.length === 1) this.res.end(chunks[0]);
    else endWithChunks(this.res, chunks);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private ping(): void {
    if (this.res.writableEnded || this.res.destroyed) return this.stop();
    if (!this.res.headersSent) {
      this.reply.hijack();
      this.res.statusCode = 200;
      this.res.setHeader('Content-Type', 'application/json; charset=utf-8');
      this.res.flushHeaders();
    }
    this.res.write('\n');
  }
}
