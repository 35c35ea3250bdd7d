// Two projects: unit tests beside the code (fakes allowed) and end-to-end tests in
// test/ against real PostgreSQL, Redis and Docker. TypeScript is compiled by SWC to
// ESM, the same transform the build uses (see docs/decisions/001-esm-swc-tsgo.md).
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2023',
      keepClassNames: true,
    },
    module: { type: 'es6' },
  },
];

const common = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: {
    '^@drydock/client$': '<rootDir>/packages/client/src/index.ts',
    '^@drydock/(.*)$': '<rootDir>/libs/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  setupFiles: ['reflect-metadata'],
};

export default {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/{apps,libs}/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'e2e',
      // The client packages' suites run against the real platform too.
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts', '<rootDir>/packages/*/test/**/*.e2e-spec.ts'],
    },
    // The sandbox's own guarantees again with every session under gVisor (the gvisor tier,
    // docs/security.md): hardening, hostile code, executions, artifacts.
    {
      ...common,
      displayName: 'e2e-gvisor',
      setupFiles: [...common.setupFiles, '<rootDir>/test/e2e/support/gvisor-tier.ts'],
      testMatch: ['sandbox-hardening', 'isolation', 'sessions', 'artifacts'].map((name) => `<rootDir>/test/e2e/${name}.e2e-spec.ts`),
    },
    // Faults injected into the real deployment (processes, PostgreSQL and Redis restarts):
    // files run one at a time like every other (maxWorkers), so no other suite sees them.
    { ...common, displayName: 'faults', testMatch: ['<rootDir>/test/faults/**/*.fault-spec.ts'] },
  ],
  // e2e suites share one Docker engine and database; run files one at a time.
  maxWorkers: 1,
  // Each file loads the app's module graph into a vm context of its own, and those are
  // not all reclaimed: in one process the heap grew past 1 GB in 15 e2e files, and late
  // suites slowed to minutes (a 60 s start-up hook timed out in CI). With a limit, jest
  // runs the files in a worker process and replaces it once it holds more than this.
  workerIdleMemoryLimit: '800MB',
  // Global only: jest ignores testTimeout inside a project. Sandbox tests wait on real
  // containers and timeouts; no test relies on this bound for its assertions.
  testTimeout: 60_000,
};
