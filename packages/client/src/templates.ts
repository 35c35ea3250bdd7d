import { DrydockError, TemplateBuildError } from './errors.js';
import { unwrap, unwrapStream, type Transport } from './http.js';
import { serverSentEvents } from './streams.js';
import type { CreateTemplateOptions, Template, TemplateBuildInfo, TemplateSummary, TemplateVersion, TemplateVersionStatus } from './types.js';

// What a build handle needs of its routes: a tenant's (/v1/templates) or the shared
// ones (/admin/templates), which answer the same shapes.
export interface TemplateRoutes {
  get(name: string): Promise<Template>;
  logs(name: string, version: number, signal?: AbortSignal): Promise<ReadableStream<Uint8Array>>;
}

export interface BuildWaitOptions {
  // Called with each line of the build log as the worker produces it, from the first.
  onLog?: (line: string) => void;
  signal?: AbortSignal;
}

type BuildEnd = { status: TemplateVersionStatus; error: string | null };

// Connections cut mid-stream (an idle timeout, a proxy) followed again in a row before
// giving up; any line received in between resets the count.
const MAX_CUTS = 3;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// One version of a template being built (or built): its log, and its outcome.
// `for await (const line of build)` is `build.logs()`.
export class TemplateBuild implements AsyncIterable<string> {
  private end: BuildEnd | null = null;

  constructor(
    private readonly routes: TemplateRoutes,
    readonly name: string,
    readonly version: number,
  ) {}

  // "name:version", as sessions take it (`template`) and record it.
  get ref(): string {
    return `${this.name}:${this.version}`;
  }

  // Every line of the build log from the first, as the worker produces them; ends when
  // the build has (then `wait()` answers at once). Breaking out of the loop closes the
  // connection; the build goes on.
  async *logs(options: { signal?: AbortSignal } = {}): AsyncGenerator<string> {
    yield* this.follow(options.signal);
  }

  [Symbol.asyncIterator](): AsyncGenerator<string> {
    return this.logs();
  }

  // Follows the build to its end and resolves to the version once it is ready; throws a
  // TemplateBuildError (code TEMPLATE_BUILD_FAILED) with the platform's reason when it
  // failed.
  async wait(options: BuildWaitOptions = {}): Promise<TemplateVersion> {
    if (!this.end) {
      const lines = this.follow(options.signal);
      for (let next = await lines.next(); !next.done; next = await lines.next()) options.onLog?.(next.value);
    }
    const end = this.end!;
    if (end.status === 'failed') throw new TemplateBuildError(this.name, this.version, end.error ?? 'the build failed');
    const version = (await this.routes.get(this.name)).versions.find((v) => v.version === this.version);
    if (!version) throw new DrydockError('TEMPLATE_NOT_FOUND', `Template ${this.ref} is gone.`, 404);
    return version;
  }

  // The log's lines until its `done` event, which sets `end`. A stream that ended or
  // was cut before it is followed again, skipping the lines already seen (it always
  // starts from the first).
  private async *follow(signal?: AbortSignal): AsyncGenerator<string, void> {
    let seen = 0;
    let cuts = 0;
    for (;;) {
      const stream = await this.routes.logs(this.name, this.version, signal);
      let index = 0;
      try {
        for await (const { event, data } of serverSentEvents(stream)) {
          const payload = JSON.parse(data) as Record<string, unknown>;
          if (event === 'log') {
            if (index++ < seen) continue;
            seen++;
            cuts = 0;
            yield String(payload.line);
          } else if (event === 'done') {
            this.end = { status: payload.status as TemplateVersionStatus, error: (payload.error as string | null | undefined) ?? null };
            return;
          } else if (event === 'error' && typeof payload.code === 'string') {
            throw new DrydockError(payload.code, String(payload.message), 0, payload.details as Record<string, unknown> | undefined);
          }
        }
      } catch (error) {
        if (error instanceof DrydockError || signal?.aborted || ++cuts > MAX_CUTS) throw error;
      } finally {
        // Ended early (the reader broke out, an error): close the connection.
        await stream.cancel().catch(() => undefined);
      }
      await sleep(500);
    }
  }
}

// A tenant's templates: sandbox images built from a Dockerfile that starts FROM drydock;
// sessions start from one with `sessions.create({template})`.
export class Templates {
  private readonly routes: TemplateRoutes;

  constructor(private readonly http: Transport) {
    this.routes = {
      get: (name) => this.get(name),
      logs: (name, version, signal) =>
        unwrapStream(this.http.api.GET('/v1/templates/{name}/versions/{version}/logs', { params: { path: { name, version } }, parseAs: 'stream', signal })),
    };
  }

  // Queues a build (a new version of `name`, the template itself the first time) and
  // resolves at once to its handle: follow `logs()`, or `wait()` for the outcome.
  async build(options: CreateTemplateOptions & { signal?: AbortSignal }): Promise<TemplateBuild> {
    const { signal, ...body } = options;
    const queued: TemplateBuildInfo = await unwrap(this.http.api.POST('/v1/templates', { body, signal }));
    return new TemplateBuild(this.routes, queued.name, queued.version);
  }

  // A handle on a version built earlier (or building): its log and outcome.
  buildOf(name: string, version: number): TemplateBuild {
    return new TemplateBuild(this.routes, name, version);
  }

  // The tenant's own, then the shared ones, each with its newest version.
  async list(): Promise<TemplateSummary[]> {
    return (await unwrap(this.http.api.GET('/v1/templates', {}))).templates;
  }

  async get(name: string): Promise<Template> {
    return unwrap(this.http.api.GET('/v1/templates/{name}', { params: { path: { name } } }));
  }

  // No new session starts from it; its images go once no live session uses them.
  async delete(name: string): Promise<void> {
    await unwrap(this.http.api.DELETE('/v1/templates/{name}', { params: { path: { name } } }));
  }
}
