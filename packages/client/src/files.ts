import { uploadBody, type FileData } from './bodies.js';
import type { Transport } from './http.js';
import { unwrap, unwrapBytes, unwrapStream } from './http.js';
import type { ArchiveUpload, EditResult, FileEntry, FileInfo, GrepOptions, GrepResult } from './types.js';

export type { ByteStream, FileData } from './bodies.js';

// A thread's files: the same files the thread's sandbox sees under /session.
export class ThreadFiles {
  constructor(
    private readonly http: Transport,
    readonly threadId: string,
  ) {}

  private get path() {
    return { threadId: this.threadId };
  }

  async ls(path = '/'): Promise<FileEntry[]> {
    const body = await unwrap(this.http.api.GET('/v1/threads/{threadId}/files', { params: { path: this.path, query: { path } } }));
    return body.entries;
  }

  async stat(path: string): Promise<FileInfo | FileEntry> {
    return unwrap(this.http.api.GET('/v1/threads/{threadId}/files/stat', { params: { path: this.path, query: { path } } }));
  }

  // A text file as numbered lines (`cat -n` style), `limit` lines from `offset`.
  async read(path: string, options: { offset?: number; limit?: number } = {}): Promise<string> {
    const body = await unwrap(this.http.api.GET('/v1/threads/{threadId}/files/read', { params: { path: this.path, query: { path, ...options } } }));
    return body.content;
  }

  // The file's text, decoded as UTF-8.
  async readText(path: string): Promise<string> {
    return new TextDecoder().decode(await this.download(path));
  }

  // The file's bytes.
  async download(path: string, options: { signal?: AbortSignal } = {}): Promise<Uint8Array> {
    return unwrapBytes(this.http.api.GET('/v1/threads/{threadId}/files/content', { params: { path: this.path, query: { path } }, parseAs: 'arrayBuffer', signal: options.signal }));
  }

  // The file's bytes as a stream, read as they arrive (never whole in memory): pipe it to
  // a file (Node: `Readable.fromWeb(stream).pipe(createWriteStream(…))`, or
  // `pipeline(stream, createWriteStream(…))`). A missing file throws before any byte.
  async downloadStream(path: string, options: { signal?: AbortSignal } = {}): Promise<ReadableStream<Uint8Array>> {
    return unwrapStream(this.http.api.GET('/v1/threads/{threadId}/files/content', { params: { path: this.path, query: { path } }, parseAs: 'stream', signal: options.signal }));
  }

  // Writes a file (creating its directories); a string is stored as UTF-8 text. A
  // ReadableStream or an async iterable of chunks (a Node stream: fs.createReadStream,
  // process.stdin) is sent as it is read, never held whole here; such an upload is sent
  // once, without retries (the stream cannot be read again).
  async write(path: string, data: FileData, contentType?: string): Promise<FileInfo> {
    const type = contentType ?? (typeof data === 'string' ? 'text/plain; charset=utf-8' : data instanceof Blob && data.type ? data.type : 'application/octet-stream');
    const { body, streamed } = typeof data === 'string' ? { body: data, streamed: false } : uploadBody(data);
    return unwrap(
      this.http.api.PUT('/v1/threads/{threadId}/files/content', {
        params: { path: this.path, query: { path } },
        body: body as never,
        bodySerializer: (body: unknown) => body as never,
        headers: { 'content-type': type },
        ...this.sending(streamed),
      }),
    );
  }

  // Same as write, for bytes read elsewhere (a browser File, a Node Buffer or stream).
  upload(path: string, data: Exclude<FileData, string>, contentType?: string): Promise<FileInfo> {
    return this.write(path, data, contentType);
  }

  // Many files in one request: a tar archive (gzipped with `gzip: true`), as bytes or a
  // stream (`tar -c … | …`, read as it is sent), whose regular files are written under
  // `path` (default /), every one or none. Links and devices in the archive refuse it
  // (UNSUPPORTED_ARCHIVE_ENTRY).
  async uploadArchive(archive: Exclude<FileData, string>, options: { path?: string; gzip?: boolean } = {}): Promise<ArchiveUpload> {
    const { body, streamed } = uploadBody(archive);
    return unwrap(
      this.http.api.POST('/v1/threads/{threadId}/files/archive', {
        params: { path: this.path, query: options.path === undefined ? {} : { path: options.path } },
        body: body as never,
        bodySerializer: (body: unknown) => body as never,
        headers: { 'content-type': options.gzip ? 'application/gzip' : 'application/x-tar' },
        ...this.sending(streamed),
      }),
    );
  }

  // A streamed body goes once (`duplex: "half"` is what fetch requires for one).
  private sending(streamed: boolean) {
    return streamed ? ({ duplex: 'half', fetch: this.http.onceFetch } as {}) : {};
  }

  async edit(path: string, oldString: string, newString: string, options: { replaceAll?: boolean } = {}): Promise<EditResult> {
    return unwrap(this.http.api.POST('/v1/threads/{threadId}/files/edit', { params: { path: this.path }, body: { path, oldString, newString, ...options } }));
  }

  async glob(pattern: string, path?: string): Promise<string[]> {
    const body = await unwrap(this.http.api.POST('/v1/threads/{threadId}/files/glob', { params: { path: this.path }, body: { pattern, path } }));
    return body.paths;
  }

  async grep(pattern: string, options: GrepOptions = {}): Promise<GrepResult> {
    return unwrap(this.http.api.POST('/v1/threads/{threadId}/files/grep', { params: { path: this.path }, body: { pattern, ...options } }));
  }

  // Deletes a file, or a directory and everything under it.
  async delete(path: string): Promise<void> {
    await unwrap(this.http.api.DELETE('/v1/threads/{threadId}/files', { params: { path: this.path, query: { path } } }));
  }
}
