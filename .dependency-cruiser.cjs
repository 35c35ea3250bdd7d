// The layering rules of docs/development.md, checked by `npm run check:layers` (and so by
// scripts/test.sh / .ci/run). A violation fails with the rule's name and comment.
// Production code only: tests and benches may reach anything (e.g. dockerode to inspect
// containers, or the Docker runtime to time it).
const PRODUCTION = '^(apps|libs)/';
const NOT_TESTS = '\\.spec\\.ts$|\\.spec-helper\\.ts$';

module.exports = {
  forbidden: [
    {
      name: 'lib-imports-app',
      severity: 'error',
      comment: 'A lib cannot depend on an app: apps are deployables assembled from libs, never the other way round.',
      from: { path: '^libs/' },
      to: { path: '^apps/' },
    },
    {
      name: 'gateway-reaches-docker',
      severity: 'error',
      comment:
        'The gateway (and the agent it hosts) never loads Docker code: the Docker runtime (libs/docker-sandbox, dockerode) ' +
        'belongs to the worker. Import the contract from @drydock/execution instead.',
      from: { path: '^(apps/gateway|libs/agents)/', pathNot: NOT_TESTS },
      to: { path: '^libs/docker-sandbox/|node_modules/dockerode/', reachable: true },
    },
    {
      name: 'dockerode-outside-docker-runtime',
      severity: 'error',
      comment: 'Only the Docker runtime (libs/docker-sandbox) talks to Docker; everything else goes through the SandboxRuntime port.',
      from: { path: PRODUCTION, pathNot: '^libs/docker-sandbox/' },
      to: { path: 'node_modules/dockerode/' },
    },
    {
      name: 'typeorm-outside-repositories',
      severity: 'error',
      comment:
        'Only *.repository.ts files use TypeORM; services depend on a repository interface injected by token. ' +
        'Besides repositories, only what maps the schema may import it: entities (*.entity.ts), the connection ' +
        '(libs/core/src/database/), and the agents module that registers its entity (agent-definitions.module.ts).',
      from: {
        path: PRODUCTION,
        pathNot: [
          '\\.repository\\.ts$',
          '\\.entity\\.ts$',
          '^libs/core/src/database/',
          '^libs/agents/src/definitions/agent-definitions\\.module\\.ts$',
          NOT_TESTS,
        ],
      },
      to: { path: 'node_modules/(typeorm|@nestjs/typeorm)/' },
    },
    {
      name: 'lib-internals-through-barrel',
      severity: 'error',
      comment: 'Another lib is imported through its barrel (@drydock/<name>), never by a path into its src/.',
      from: { path: '^(apps|libs)/([^/]+)/' },
      to: { path: '^libs/([^/]+)/src/(?!index\\.ts$)', pathNot: '^libs/$2/' },
    },
    {
      name: 'no-circular-between-libs',
      severity: 'error',
      comment: 'Libs form layers (core at the bottom, apps on top); a cycle between two libs means one of them holds the wrong thing.',
      from: { path: '^libs/([^/]+)/' },
      to: { path: '^libs/', pathNot: '^libs/$1/', circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|var|coverage)/' },
    tsConfig: { fileName: 'tsconfig.json' },
    // TypeScript 7 ships no compiler API; swc (already the build's compiler) parses.
    parser: 'swc',
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
