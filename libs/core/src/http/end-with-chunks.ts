import type { OutgoingMessage } from 'node:http';

// A body given as chunks (JsonListBytes' bytes among them), sent one after the other
// without joining them into one buffer.

// The body's length in bytes, for its Content-Length.
export function chunksLength(chunks: readonly (string | Uint8Array)[]): number {
  let length = 0;
  for (const chunk of chunks) length += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
  return length;
}

// Ends a request or response with these chunks as its body: corked, so the headers and
// every chunk reach the socket in one write.
export function endWithChunks(message: OutgoingMessage, chunks: readonly (string | Uint8Array)[]): void {
  message.cork();
  for (const chunk of chunks) message.write(chunk);
  message.end();
  message.uncork();
}
