import { Agents } from './agents.js';
import { Artifacts } from './artifacts.js';
import { Batches } from './batches.js';
import { createTransport, type RetryPolicy } from './http.js';
import { Sessions, Snapshots } from './sessions.js';
import { ThreadFiles } from './files.js';
import { Admin, type Tenants } from './admin.js';
import { Templates } from './templates.js';

export interface DrydockOptions {
  // The gateway, e.g. http://localhost:8080.
  url: string;
  // A tenant's API key (ddk_…); for `admin` (and `tenants`), the operator's admin key.
  apiKey: string;
  // A fetch to use instead of the global one (tests, proxies).
  fetch?: typeof fetch;
  // Retries of idempotent calls through outages and rate limits; { attempts: 1 } turns them off.
  retry?: Partial<RetryPolicy>;
}

// The Drydock client: `new Drydock({url, apiKey})`, then sessions, files, artifacts,
// batches, agents and templates. Uses fetch only, so it runs in Node 20+ and in browsers.
export class Drydock {
  readonly sessions: Sessions;
  // Snapshots of gvisor sessions (sessions.fork starts a session from one).
  readonly snapshots: Snapshots;
  readonly artifacts: Artifacts;
  readonly batches: Batches;
  readonly agents: Agents;
  readonly templates: Templates;
  // Operator calls (tenants, shared templates): need the admin key as apiKey.
  readonly admin: Admin;
  // = admin.tenants.
  readonly tenants: Tenants;
  private readonly transport;

  constructor(options: DrydockOptions) {
    if (!options?.url) throw new TypeError('Drydock: `url` is required (e.g. http://localhost:8080).');
    if (!options.apiKey) throw new TypeError('Drydock: `apiKey` is required.');
    this.transport = createTransport({ url: options.url, key: options.apiKey, fetch: options.fetch, retry: options.retry });
    this.sessions = new Sessions(this.transport);
    this.snapshots = new Snapshots(this.transport);
    this.artifacts = new Artifacts(this.transport);
    this.batches = new Batches(this.transport);
    this.agents = new Agents(this.transport);
    this.templates = new Templates(this.transport);
    this.admin = new Admin(this.transport);
    this.tenants = this.admin.tenants;
  }

  // A thread's files, without a session.
  files(threadId: string): ThreadFiles {
    return new ThreadFiles(this.transport, threadId);
  }
}
