import { z } from 'zod';
import type { Backend } from './backend-protocol.js';
import { assertRoutePrefix, CompositeBackend } from './composite-backend.js';
import { FilesystemBackend, type FilesystemBackendOptions } from './filesystem-backend.js';
import { BackendError } from './backend.errors.js';

// An agent definition's storage layout: which backend serves which path prefix, e.g.
//   [{ prefix: '/memories/', backend: 'tenant-store' }, { prefix: '/', backend: 'thread-store' }]
// Definitions come from tenants, so they name backends, never places: a filesystem
// route names one of the host folders the operator configured, by name.

export const BACKEND_KINDS = ['thread-store', 'tenant-store', 'state', 'filesystem'] as const;
export type BackendKind = (typeof BACKEND_KINDS)[number];

const MAX_ROUTES = 16;
const ROOT_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

const prefixSchema = z
  .string()
  .max(1024)
  .refine((p) => p.startsWith('/') && p.endsWith('/'), { message: 'a prefix must start and end with "/"' })
  .refine(
    (p) => {
      if (p === '/') return true;
      try {
        assertRoutePrefix(p);
        return true;
      } catch {
        return false;
      }
    },
    { message: 'a prefix must be a normalised absolute folder path such as /memories/' },
  );

const routeSchema = z.discriminatedUnion('backend', [
  z.strictObject({ prefix: prefixSchema, backend: z.literal('thread-store') }),
  z.strictObject({ prefix: prefixSchema, backend: z.literal('tenant-store') }),
  z.strictObject({ prefix: prefixSchema, backend: z.literal('state') }),
  z.strictObject({
    prefix: prefixSchema,
    backend: z.literal('filesystem'),
    // A name from the operator's configuration, not a host path.
    root: z.string().regex(ROOT_NAME, 'a filesystem root is named by a configured name such as "datasets"'),
  }),
]);

export const backendRoutesSchema = z
  .array(routeSchema)
  .max(MAX_ROUTES)
  .superRefine((routes, issues) => {
    const prefixes = new Set<string>();
    const targets = new Set<string>();
    for (const [i, route] of routes.entries()) {
      if (prefixes.has(route.prefix)) {
        issues.addIssue({ code: 'custom', path: [i, 'prefix'], message: `the prefix ${route.prefix} appears twice` });
      }
      prefixes.add(route.prefix);
      // One backend at two prefixes would show the same files under both.
      const target = route.backend === 'filesystem' ? `filesystem:${route.root}` : route.backend;
      if (targets.has(target)) {
        issues.addIssue({ code: 'custom', path: [i, 'backend'], message: `${target} is routed more than once` });
      }
      targets.add(target);
    }
    const hasDefault = prefixes.has('/');
    if (!hasDefault && targets.has('thread-store')) {
      issues.addIssue({
        code: 'custom',
        path: [],
        message: 'thread-store is the default for "/"; route it at "/" or not at all',
      });
    }
  });

export type BackendRouteConfig = z.infer<typeof routeSchema>;

// Host folders the operator made available, by name (from validated app config).
export type FilesystemRoots = Record<string, Omit<FilesystemBackendOptions, 'regexBudgetMs'>>;

export interface BackendRouteOptions {
  filesystemRoots?: FilesystemRoots;
}

function describe(error: z.ZodError): string {
  return error.issues
    .map((issue) => (issue.path.length > 0 ? `routes[${issue.path.join('].')}: ${issue.message}` : issue.message))
    .join('; ');
}

// Validates a route list; without a `/` route, `/` goes to the thread store.
export function parseBackendRoutes(input: unknown, options: BackendRouteOptions = {}): BackendRouteConfig[] {
  const parsed = backendRoutesSchema.safeParse(input);
  if (!parsed.success) throw BackendError.invalidConfig(`${describe(parsed.error)}.`);
  const roots = options.filesystemRoots ?? {};
  for (const route of parsed.data) {
    if (route.backend === 'filesystem' && !Object.hasOwn(roots, route.root)) {
      throw BackendError.invalidConfig(`the filesystem root "${route.root}" is not configured on this server.`);
    }
  }
  const routes = [...parsed.data];
  if (!routes.some((r) => r.prefix === '/')) routes.push({ prefix: '/', backend: 'thread-store' });
  return routes;
}

export interface BackendSet {
  threadStore: Backend;
  tenantStore: Backend;
  state: Backend;
  filesystem(name: string): Backend;
}

// One FilesystemBackend per configured root, built once at start-up.
export function filesystemBackends(roots: FilesystemRoots): (name: string) => Backend {
  const built = new Map(Object.entries(roots).map(([name, options]) => [name, new FilesystemBackend(options)]));
  return (name) => {
    const backend = built.get(name);
    if (!backend) throw BackendError.invalidConfig(`the filesystem root "${name}" is not configured on this server.`);
    return backend;
  };
}

// The backend an agent's tools use for a parsed route list.
export function buildRoutedBackend(routes: BackendRouteConfig[], backends: BackendSet): Backend {
  const pick = (route: BackendRouteConfig): Backend => {
    switch (route.backend) {
      case 'thread-store':
        return backends.threadStore;
      case 'tenant-store':
        return backends.tenantStore;
      case 'state':
        return backends.state;
      case 'filesystem':
        return backends.filesystem(route.root);
    }
  };
  const root = routes.find((r) => r.prefix === '/');
  const mounted = routes.filter((r) => r.prefix !== '/').map((r) => ({ prefix: r.prefix, backend: pick(r) }));
  const fallback = root ? pick(root) : backends.threadStore;
  return mounted.length === 0 ? fallback : new CompositeBackend(fallback, mounted);
}
