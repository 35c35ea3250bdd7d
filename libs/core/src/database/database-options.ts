import type { DataSourceOptions } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';

// One place that turns config into TypeORM options, shared by both apps and the
// migration runner. Schema changes only ever happen through migrations.
export function databaseOptions(
  config: Pick<AppConfig, 'databaseUrl'>,
  entities: DataSourceOptions['entities'],
  migrations: DataSourceOptions['migrations'] = [],
  options: { statementTimeoutMs?: number } = {},
): DataSourceOptions {
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
