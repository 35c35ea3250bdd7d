import type { DataSourceOptions } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';

// One place that turns config into TypeORM options, shared by both apps and the
// migration runner. Schema changes only ever happen through migrations.
export function databaseOptions(
  config: Pick<AppConfig, 'databaseUrl'>,
  entities: DataSourceOptions['entities'],
  migrations: DataSourceOptions['migrations'] = [],
): DataSourceOptions {
  return {
    type: 'postgres',
    url: config.databaseUrl,
    entities,
    migrations,
    synchronize: false,
    migrationsRun: false,
    logging: ['error'],
    extra: { max: 20 },
  };
}
