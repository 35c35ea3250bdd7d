import { unwrap, unwrapBytes, unwrapStream, type Transport } from './http.js';
import type { Artifact, SignedUrl } from './types.js';

// Files the code left under /session/artifacts/: plots, CSVs, reports.
export class Artifacts {
  constructor(private readonly http: Transport) {}

  async list(options: { threadId?: string; batchId?: string; limit?: number } = {}): Promise<Artifact[]> {
    const body = await unwrap(this.http.api.GET('/v1/artifacts', { params: { query: options } }));
    return body.artifacts;
  }

  async get(id: string): Promise<Artifact> {
    return unwrap(this.http.api.GET('/v1/artifacts/{id}', { params: { path: { id } } }));
  }

  async download(id: string, options: { signal?: AbortSignal } = {}): Promise<Uint8Array> {
    return unwrapBytes(this.http.api.GET('/v1/artifacts/{id}/content', { params: { path: { id } }, parseAs: 'arrayBuffer', signal: options.signal }));
  }

  // The artifact's bytes as a stream, read as they arrive (never whole in memory); a
  // missing one throws before any byte.
  async downloadStream(id: string, options: { signal?: AbortSignal } = {}): Promise<ReadableStream<Uint8Array>> {
    return unwrapStream(this.http.api.GET('/v1/artifacts/{id}/content', { params: { path: { id } }, parseAs: 'stream', signal: options.signal }));
  }

  // A link that downloads the artifact without an API key until it expires (hand it to
  // a browser or a user).
  async signedUrl(id: string, options: { ttlSeconds?: number } = {}): Promise<SignedUrl> {
    const signed = await unwrap(this.http.api.POST('/v1/artifacts/{id}/url', { params: { path: { id } }, body: options as never }));
    return { ...signed, url: new URL(signed.url, this.http.baseUrl + '/').toString() };
  }

  async delete(id: string): Promise<void> {
    await unwrap(this.http.api.DELETE('/v1/artifacts/{id}', { params: { path: { id } } }));
  }
}
