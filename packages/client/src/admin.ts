import { unwrap, unwrapStream, type Transport } from './http.js';
import { everyItem } from './pages.js';
import { TemplateBuild, type TemplateRoutes } from './templates.js';
import type {
  AdminConnection,
  AdminEgressPage,
  AdminEgressQuery,
  CreateTemplateOptions,
  DrainingWorker,
  Template,
  TemplateBuildInfo,
  TemplateSummary,
  Tenant,
  TenantDeleted,
  TenantLimits,
  TenantWithKey,
  Usage,
  UsageQuery,
  WorkerInfo,
} from './types.js';

// Operator calls (the admin key): tenants and their keys.
export class Tenants {
  constructor(private readonly http: Transport) {}

  // Creates a tenant; its API key is in the answer, shown once.
  async create(name: string, limits?: TenantLimits): Promise<TenantWithKey> {
    return unwrap(this.http.api.POST('/admin/tenants', { body: { name, limits } }));
  }

  async list(): Promise<Tenant[]> {
    return (await unwrap(this.http.api.GET('/admin/tenants', {}))).tenants;
  }

  async get(id: string): Promise<Tenant> {
    return unwrap(this.http.api.GET('/admin/tenants/{id}', { params: { path: { id } } }));
  }

  // Merges `limits` into the tenant's: keys left out keep their value. `network: {allow,
  // ranges?}` sets its network ceiling (lowering it narrows live sessions at their next
  // connection); `network: null` removes it.
  async update(id: string, limits: TenantLimits): Promise<Tenant> {
    return unwrap(this.http.api.PATCH('/admin/tenants/{id}', { params: { path: { id } }, body: { limits } }));
  }

  // Its keys answer 403 TENANT_SUSPENDED, its live sessions end and its queued batch
  // items wait; resolves to the tenant with `suspendedAt` set.
  async suspend(id: string): Promise<Tenant> {
    return unwrap(this.http.api.POST('/admin/tenants/{id}/suspend', { params: { path: { id } } }));
  }

  // All of it works again (`suspendedAt` null).
  async resume(id: string): Promise<Tenant> {
    return unwrap(this.http.api.POST('/admin/tenants/{id}/resume', { params: { path: { id } } }));
  }

  // Removes the tenant and everything it owns (sessions, files, artifacts, batches,
  // agents, usage). Not undoable.
  async delete(id: string): Promise<TenantDeleted> {
    return unwrap(this.http.api.DELETE('/admin/tenants/{id}', { params: { path: { id } } }));
  }
}

// Operator calls (the admin key): the live workers.
export class Workers {
  constructor(private readonly http: Transport) {}

  async list(): Promise<WorkerInfo[]> {
    return (await unwrap(this.http.api.GET('/admin/workers', {}))).workers;
  }

  // The worker stops taking sessions and batch items, lets running work finish, hands
  // its sessions back and removes its containers; it sees the request with its next
  // heartbeat (404 WORKER_NOT_FOUND when no live worker has that id).
  async drain(id: string): Promise<DrainingWorker> {
    return unwrap(this.http.api.POST('/admin/workers/{id}/drain', { params: { path: { id } } }));
  }
}

// Operator calls (the admin key): every tenant's connection attempts through the egress
// proxy, newest first.
export class Egress {
  constructor(private readonly http: Transport) {}

  // One page: pass `next` as `before` for the following one (null on the last). Filters:
  // tenantId, sessionId, batchId, verdict, from and to (ISO 8601; 400 INVALID_RANGE unless from <
  // to); limit is the page's size (1-1000, default 100).
  async list(query: AdminEgressQuery & { signal?: AbortSignal } = {}): Promise<AdminEgressPage> {
    const { signal, ...rest } = query;
    return unwrap(this.http.api.GET('/admin/egress', { params: { query: rest }, signal }));
  }

  // Every matching connection, newest first, across pages (`pageSize` per request,
  // default 100), asked page by page as the loop goes.
  all(query: Omit<AdminEgressQuery, 'before' | 'limit'> & { pageSize?: number; signal?: AbortSignal } = {}): AsyncGenerator<AdminConnection> {
    const { pageSize, ...rest } = query;
    return everyItem(async (before) => {
      const page = await this.list({ ...rest, ...(pageSize ? { limit: pageSize } : {}), ...(before ? { before } : {}) });
      return { items: page.connections, next: page.next };
    });
  }
}

// Operator calls (the admin key): shared templates, which every tenant sees and starts
// sessions from, built and followed as a tenant's are, and their warm pools.
export class SharedTemplates {
  private readonly routes: TemplateRoutes;

  constructor(private readonly http: Transport) {
    this.routes = {
      get: (name) => this.get(name),
      logs: (name, version, signal) =>
        unwrapStream(this.http.api.GET('/admin/templates/{name}/versions/{version}/logs', { params: { path: { name, version } }, parseAs: 'stream', signal })),
    };
  }

  // Queues a build of a shared template (a new version of it) and resolves to its handle.
  async build(options: CreateTemplateOptions & { signal?: AbortSignal }): Promise<TemplateBuild> {
    const { signal, ...body } = options;
    const queued: TemplateBuildInfo = await unwrap(this.http.api.POST('/admin/templates', { body, signal }));
    return new TemplateBuild(this.routes, queued.name, queued.version);
  }

  buildOf(name: string, version: number): TemplateBuild {
    return new TemplateBuild(this.routes, name, version);
  }

  async list(): Promise<TemplateSummary[]> {
    return (await unwrap(this.http.api.GET('/admin/templates', {}))).templates;
  }

  async get(name: string): Promise<Template> {
    return unwrap(this.http.api.GET('/admin/templates/{name}', { params: { path: { name } } }));
  }

  // Started sandboxes of its newest ready version each worker keeps warm (0-20).
  async setPoolSize(name: string, poolSize: number): Promise<Template> {
    return unwrap(this.http.api.PATCH('/admin/templates/{name}', { params: { path: { name } }, body: { poolSize } }));
  }

  async delete(name: string): Promise<void> {
    await unwrap(this.http.api.DELETE('/admin/templates/{name}', { params: { path: { name } } }));
  }
}

// Everything that takes the operator's admin key as `apiKey`.
export class Admin {
  readonly tenants: Tenants;
  readonly templates: SharedTemplates;
  readonly egress: Egress;
  readonly workers: Workers;

  constructor(private readonly http: Transport) {
    this.tenants = new Tenants(http);
    this.templates = new SharedTemplates(http);
    this.egress = new Egress(http);
    this.workers = new Workers(http);
  }

  // Usage per tenant and UTC day (executions and batch items: count, CPU and wall
  // seconds; egress bytes) and what each tenant stores now. `from`/`to` are ISO 8601
  // (default the last 30 days, at most 366: 400 INVALID_RANGE); `tenantId` keeps one.
  async usage(query: UsageQuery & { signal?: AbortSignal } = {}): Promise<Usage> {
    const { signal, ...rest } = query;
    return unwrap(this.http.api.GET('/admin/usage', { params: { query: rest }, signal }));
  }
}
