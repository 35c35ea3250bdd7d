import type { Backend } from './backend-protocol.js';
import { buildRoutedBackend, parseBackendRoutes } from './backend-routes.js';
import { CompositeBackend } from './composite-backend.js';
import { StateBackend } from './state-backend.js';

function messageOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect((error as { code: string }).code).toBe('INVALID_BACKEND_CONFIG');
    return (error as Error).message;
  }
  throw new Error('expected a throw');
}

describe(parseBackendRoutes.name, () => {
  const operator = { filesystemRoots: { datasets: { rootDir: '/srv/datasets', readOnly: true } } };

  it('should accept store, state and configured filesystem routes', () => {
    expect(
      parseBackendRoutes(
        [
          { prefix: '/memories/', backend: 'tenant-store' },
          { prefix: '/scratch/', backend: 'state' },
          { prefix: '/data/', backend: 'filesystem', root: 'datasets' },
          { prefix: '/', backend: 'thread-store' },
        ],
        operator,
      ),
    ).toHaveLength(4);
  });

  it('should send / to the thread store when no route names it', () => {
    expect(parseBackendRoutes([{ prefix: '/memories/', backend: 'tenant-store' }])).toEqual([
      { prefix: '/memories/', backend: 'tenant-store' },
      { prefix: '/', backend: 'thread-store' },
    ]);
  });

  it('should reject unknown backend kinds', () => {
    expect(messageOf(() => parseBackendRoutes([{ prefix: '/x/', backend: 's3' }]))).toMatch(/routes\[0\]/);
  });

  it('should reject prefixes that do not start and end with / or are not normalised', () => {
    expect(messageOf(() => parseBackendRoutes([{ prefix: 'memories/', backend: 'tenant-store' }]))).toMatch(/start and end/);
    expect(messageOf(() => parseBackendRoutes([{ prefix: '/memories', backend: 'tenant-store' }]))).toMatch(/start and end/);
    expect(messageOf(() => parseBackendRoutes([{ prefix: '/a/../b/', backend: 'tenant-store' }]))).toMatch(/normalised/);
    expect(messageOf(() => parseBackendRoutes([{ prefix: '//', backend: 'tenant-store' }]))).toMatch(/normalised/);
  });

  it('should never take a host path from the definition', () => {
    expect(messageOf(() => parseBackendRoutes([{ prefix: '/d/', backend: 'filesystem', root: '/etc' }], operator))).toMatch(
      /configured name/,
    );
    expect(
      messageOf(() =>
        parseBackendRoutes([{ prefix: '/d/', backend: 'filesystem', root: 'datasets', rootDir: '/etc' }], operator),
      ),
    ).toMatch(/rootDir/);
    expect(messageOf(() => parseBackendRoutes([{ prefix: '/d/', backend: 'filesystem', root: 'home' }], operator))).toMatch(
      /not configured/,
    );
  });

  it('should reject a backend routed twice, which would show the same files at two prefixes', () => {
    expect(
      messageOf(() =>
        parseBackendRoutes([
          { prefix: '/memories/', backend: 'tenant-store' },
          { prefix: '/notes/', backend: 'tenant-store' },
        ]),
      ),
    ).toMatch(/more than once/);
    expect(messageOf(() => parseBackendRoutes([{ prefix: '/t/', backend: 'thread-store' }]))).toMatch(/default/);
  });
});

describe(buildRoutedBackend.name, () => {
  it('should mount every non-root route over the / backend', () => {
    const threadStore = new StateBackend();
    const set = { threadStore, tenantStore: new StateBackend(), state: new StateBackend(), filesystem: (): Backend => threadStore };
    expect(buildRoutedBackend(parseBackendRoutes([]), set)).toBe(threadStore);
    expect(buildRoutedBackend(parseBackendRoutes([{ prefix: '/memories/', backend: 'tenant-store' }]), set)).toBeInstanceOf(
      CompositeBackend,
    );
  });
});
