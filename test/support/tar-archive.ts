import tar from 'tar-stream';

// Tar archives for the tests of the bulk upload (unit and e2e): one entry per item, a
// regular file unless `type` says otherwise.
export type TarEntry = { name: string; type?: tar.Header['type']; body?: string | Buffer; linkname?: string };

export async function tarOf(entries: TarEntry[]): Promise<Buffer> {
  const pack = tar.pack();
  for (const e of entries) {
    const header = { name: e.name, type: e.type ?? 'file', ...(e.linkname ? { linkname: e.linkname } : {}) };
    if (e.body !== undefined) pack.entry(header, e.body);
    else pack.entry({ ...header, size: 0 });
  }
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}
