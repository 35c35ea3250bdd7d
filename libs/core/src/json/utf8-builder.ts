// UTF-8 bytes written one string at a time into fixed-size chunks, joined once at the
// end, for a large answer made of many pieces (VfsService.grepJson). Joining the pieces
// as strings costs a copy for the join, another when the socket write flattens the
// result and a third to encode it, and every string over 128 KB lives in V8's
// large-object space, which only a major collection frees: a 7.5 MB grep answer left
// some 20 MB of such garbage per request. Here each piece is encoded once, into the
// current chunk; the chunks (outside the JS heap) die young once joined. A buffer that
// doubles instead would allocate twice the answer and keep up to twice it alive.
export class Utf8Builder {
  private readonly chunks: Buffer[] = [];
  private chunk: Buffer;
  private inChunk = 0;
  private used = 0;

  constructor(private readonly chunkBytes = 256 * 1024) {
    this.chunk = Buffer.allocUnsafe(chunkBytes);
  }

  write(text: string): void {
    // A UTF-16 unit is at most 3 UTF-8 bytes: text that surely fits the chunk's room is
    // written without a first pass to measure it.
    if (text.length * 3 > this.chunk.length - this.inChunk) {
      const bytes = Buffer.byteLength(text, 'utf8');
      if (this.inChunk + bytes > this.chunk.length) {
        this.chunks.push(this.chunk.subarray(0, this.inChunk));
        this.chunk = Buffer.allocUnsafe(Math.max(this.chunkBytes, bytes));
        this.inChunk = 0;
      }
    }
    const written = this.chunk.write(text, this.inChunk, 'utf8');
    this.inChunk += written;
    this.used += written;
  }

  get byteLength(): number {
    return this.used;
  }

  // Everything written, as one buffer.
  bytes(): Buffer {
    const last = this.chunk.subarray(0, this.inChunk);
    return this.chunks.length === 0 ? last : Buffer.concat([...this.chunks, last], this.used);
  }
}
