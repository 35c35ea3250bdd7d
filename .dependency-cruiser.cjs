// The layering rules of docs/development.md, checked by `npm run check:layers` (and so by
// scripts/test.sh / .ci/run). A violation fails the run with the rule's name and comment.
// It cruises apps/ and libs/, spec files included (one exemption, named in its rule). test/ and
// bench/ are not cruised: they inspect containers with dockerode and rows with TypeORM on
// purpose. migrations/ and scripts/ are not either: migrations are TypeORM by nature.
const CODE = '^(apps|libs)/';
// dockerode and the HTTP client under it.
const DOCKER_CLIENT = 'node_modules/(dockerode|docker-modem)/';
// A repository, or its unit spec (which may build the TypeORM/pg objects it is given).
const REPOSITORY = '\\.repository(\\.spec)?\\.ts$';

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
        'The gateway (and the agent it hosts) never loads Docker code, through any chain of imports: the Docker ' +
        'runtime (libs/docker-sandbox, dockerode) belongs to the worker. Keep Docker code out of the libs the ' +
        'gateway imports; they offer the contract (@drydock/execution), the worker binds it.',
      // From the gateway's entry point and the agents barrel (all the gateway can load of
      // libs/agents), so that one wrong import is reported once per Docker module, not
      // once per gateway file; gateway-imports-docker covers files not loaded from there.
      from: { path: '^(apps/gateway/src/main\\.ts|libs/agents/src/index\\.ts)$' },
      to: { path: `^libs/docker-sandbox/|${DOCKER_CLIENT}`, reachable: true },
    },
    {
      name: 'gateway-imports-docker',
      severity: 'error',
      comment:
        'No file of the gateway or libs/agents, spec files included, imports the Docker runtime (libs/docker-sandbox, ' +
        'dockerode): the gateway never loads Docker code; the worker does.',
      from: { path: '^(apps/gateway|libs/agents)/' },
      to: { path: `^libs/docker-sandbox/|${DOCKER_CLIENT}` },
    },
    {
      name: 'dockerode-outside-docker-runtime',
      severity: 'error',
      comment:
        'Only the Docker runtime (libs/docker-sandbox) talks to Docker; everything else goes through the ' +
        'SandboxRuntime port of @drydock/execution.',
      from: { path: CODE, pathNot: '^libs/docker-sandbox/' },
      to: { path: DOCKER_CLIENT },
    },
    {
      name: 'typeorm-outside-repositories',
      severity: 'error',
      comment:
        'Only *.repository.ts files use TypeORM; services and controllers depend on a repository interface ' +
        'injected by token. The few other files allowed are listed, with why, in .dependency-cruiser.cjs.',
      from: {
        path: CODE,
        pathNot: [
          REPOSITORY,
          // Entities are the mapping: TypeORM's decorators are what they are made of.
          '\\.entity\\.ts$',
          // The one connection (TypeOrmModule.forRootAsync) and the DataSourceOptions it
          // shares with the migration runner.
          '^libs/core/src/database/database\\.module\\.ts$',
          '^libs/core/src/database/database-options\\.ts$',
          // Adds the agents entity with TypeOrmModule.forFeature (DatabaseModule loads it)
          // and binds AGENTS_REPOSITORY; it wires, holds no query.
          '^libs/agents/src/definitions/agent-definitions\\.module\\.ts$',
        ],
      },
      to: { path: 'node_modules/(typeorm|@nestjs/typeorm)/' },
    },
    {
      name: 'postgres-driver-outside-repositories',
      severity: 'error',
      comment:
        'The PostgreSQL driver (pg) and LangGraph\'s PostgreSQL checkpointer are database access like TypeORM: ' +
        'only repositories and the agent\'s checkpoint store use them.',
      from: {
        path: CODE,
        pathNot: [
          REPOSITORY,
          // The checkpoint store: LangGraph's PostgresSaver over its own pg Pool is the
          // repository of the agent's conversation state.
          '^libs/agents/src/checkpoint/(cached-postgres\\.saver|checkpoint-store)\\.ts$',
          // The outage mapping's spec: the errors pg really raises when its server or
          // socket is gone, made by connecting to one that is not there.
          '^libs/core/src/errors/service-unavailable\\.spec\\.ts$',
        ],
      },
      to: { path: 'node_modules/(pg|@langchain/langgraph-checkpoint-postgres)/' },
    },
    {
      name: 'lib-internals-through-barrel',
      severity: 'error',
      comment:
        'Another lib is imported through its barrel (@drydock/<name>, libs/<name>/src/index.ts), never by a path ' +
        'into its src/: the barrel is its public surface.',
      // $2 is the importing app's or lib's own name: a lib's relative imports of itself are fine.
      from: { path: '^(apps|libs)/([^/]+)/' },
      to: { path: '^libs/([^/]+)/src/(?!index\\.ts$)', pathNot: '^libs/$2/' },
    },
    {
      name: 'no-circular-between-libs',
      severity: 'error',
      comment:
        'Libs form layers (core at the bottom, apps on top); an import cycle that crosses from one lib into ' +
        'another means one of them holds the wrong thing.',
      from: { path: '^libs/([^/]+)/' },
      to: { path: '^libs/', pathNot: '^libs/$1/', circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|var|coverage)/' },
    // Resolves the @drydock/* aliases (read by tsconfig-paths, not by the typescript package).
    tsConfig: { fileName: 'tsconfig.json' },
    // TypeScript 7 ships no JS compiler API (dependency-cruiser 17 supports typescript <7);
    // swc, already the build's compiler, parses. It keeps type-only imports: they count.
    parser: 'swc',
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};

// depcruise exits with the number of errors, and the OS keeps that modulo 256: exactly 256
// (or 512, ...) violations would exit 0 and pass CI. Any error count fails with 1 instead.
process.on('exit', () => {
  if (Number(process.exitCode) > 0) process.exitCode = 1;
});
