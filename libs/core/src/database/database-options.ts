import type { DataSourceOptions } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { recordServiceEndpoint } from '../errors/service-unavailable.js';

// One place that turns config into TypeORM options, shared by both apps and the
// migration runner. Schema changes only ever happen through migrations.
export function databaseOptions(
  config: Pick<AppConfig, 'databaseUrl'>,
  entities: DataSourceOptions['entities'],
  migrations: DataSourceOptions['migrations'] = [],
  options: { statementTimeoutMs?: number } = {},
): DataSourceOptions {
  // So that a failed connect to its TCP port is known for an outage of PostgreSQL
  // (outageOf); its Unix socket is known by name (.s.PGSQL.<port>).
  recordServiceEndpoint('database', { port: portOf(config.databaseUrl) });
  return {
    type: 'postgres',
    url: config.databaseUrl,
    entities,
    migrations,
    synchronize: false,
    migrationsRun: false,
    logging: ['error'],
    // statement_timeout bounds every statement of the connection (tenant regexes run in
    // PostgreSQL); migrations run without it.
    extra: { max: 20, ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}) },
  };
}

function portOf(url: string): number {
  try {
    return Number(new URL(url).port || 5432);
  } catch {
    return 5432;
  }
}
