// Reading streamed answers with web APIs only (fetch's ReadableStream and TextDecoder),
// so the client runs in browsers as in Node.

export interface ServerSentEvent {
  event: string;
  data: string;
}

async function* lines(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        yield buffered.slice(0, newline).replace(/\r$/, '');
        buffered = buffered.slice(newline + 1);
      }
    }
    buffered += decoder.decode();
    if (buffered) yield buffered;
  } finally {
    reader.releaseLock();
  }
}

// One event per blank-line-terminated block (the `event:` and `data:` fields we send).
export async function* serverSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  let event = 'message';
  let data: string[] = [];
  for await (const line of lines(body)) {
    if (line === '') {
      if (data.length > 0) yield { event, data: data.join('\n') };
      event = 'message';
      data = [];
    } else if (line.startsWith('event:')) {
      event = line.slice(6).trim();
    } else if (line.startsWith('data:')) {
      data.push(line.slice(5).replace(/^ /, ''));
    }
  }
  if (data.length > 0) yield { event, data: data.join('\n') };
}

// One JSON value per non-empty line.
export async function* ndjson<T>(body: ReadableStream<Uint8Array>): AsyncGenerator<T> {
  for await (const line of lines(body)) if (line.trim()) yield JSON.parse(line) as T;
}
