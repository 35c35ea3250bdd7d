// Request bodies of uploads: bytes in memory, a Blob (a browser File: the browser reads
// it from disk as it sends it), or a stream that is sent as it is read, never held whole.

// A Node stream (fs.createReadStream, process.stdin) is an AsyncIterable of Buffers.
export type ByteStream = ReadableStream<Uint8Array> | AsyncIterable<Uint8Array | string>;

export type FileData = string | Uint8Array | ArrayBuffer | Blob | ByteStream;

export const isByteStream = (data: unknown): data is ByteStream =>
  (typeof ReadableStream !== 'undefined' && data instanceof ReadableStream) ||
  (typeof data === 'object' && data !== null && Symbol.asyncIterator in data);

// A WHATWG stream that reads the source chunk by chunk as fetch sends it (backpressure:
// the next chunk is asked for only when the last one went).
export function readableOf(source: ByteStream): ReadableStream<Uint8Array> {
  if (typeof ReadableStream !== 'undefined' && source instanceof ReadableStream) return source;
  const iterator = (source as AsyncIterable<Uint8Array | string>)[Symbol.asyncIterator]();
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await iterator.next();
      if (done) return controller.close();
      controller.enqueue(typeof value === 'string' ? encoder.encode(value) : value);
    },
    async cancel(reason) {
      await iterator.return?.(reason);
    },
  });
}

// What to hand fetch: bytes as they are, a stream as a streamed body. A streamed body
// needs `duplex: "half"` (fetch in Node and in browsers refuses it otherwise) and can
// be sent only once.
export function uploadBody(data: Exclude<FileData, string>): { body: NonNullable<RequestInit['body']>; streamed: boolean } {
  if (isByteStream(data)) return { body: readableOf(data), streamed: true };
  return { body: data as NonNullable<RequestInit['body']>, streamed: false };
}
