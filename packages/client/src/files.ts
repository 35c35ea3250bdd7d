import type { Transport } from './http.js';
import { unwrap, unwrapBytes } from './http.js';
import type { ArchiveUpload, EditResult, FileEntry, FileInfo, GrepOptions, GrepResult } from './types.js';

export type FileData = string | Uint8Array | ArrayBuffer | Blob;

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
  async download(path: string): Promise<Uint8Array> {
    return unwrapBytes(this.http.api.GET('/v1/threads/{threadId}/files/content', { params: { path: this.path, query: { path } }, parseAs: 'arrayBuffer' }));
  }

  // Writes a file (creating its directories); a string is stored as UTF-8 text.
  async write(path: string, data: FileData, contentType?: string): Promise<FileInfo> {
    const type = contentType ?? (typeof data === 'string' ? 'text/plain; charset=utf-8' : data instanceof Blob && data.type ? data.type : 'application/octet-stream');
    return unwrap(
      this.http.api.PUT('/v1/threads/{threadId}/files/content', {
        params: { path: this.path, query: { path } },
        body: data as never,
        bodySerializer: (body: unknown) => body as never,
        headers: { 'content-type': type },
      }),
    );
  }

  // Same as write, for bytes read elsewhere (a browser File, a Node Buffer).
  upload(path: string, data: Exclude<FileData, string>, contentType?: string): Promise<FileInfo> {
    return this.write(path, data, contentType);
  }

  // Many files in one request: the bytes of a tar archive (gzipped with `gzip: true`),
  // whose regular files are written under `path` (default /), every one or none. Links
  // and devices in the archive refuse it (UNSUPPORTED_ARCHIVE_ENTRY).
  async uploadArchive(archive: Exclude<FileData, string>, options: { path?: string; gzip?: boolean } = {}): Promise<ArchiveUpload> {
    return unwrap(
      this.http.api.POST('/v1/threads/{threadId}/files/archive', {
        params: { path: this.path, query: options.path === undefined ? {} : { path: options.path } },
        body: archive as never,
        bodySerializer: (body: unknown) => body as never,
        headers: { 'content-type': options.gzip ? 'application/gzip' : 'application/x-tar' },
      }),
    );
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
