import { type DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { DataSourceOptions } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { databaseOptions } from './database-options.js';
import { DatabaseProbe } from './database-probe.repository.js';

// No request of the apps needs a longer statement; a runaway one is cut off.
const APP_STATEMENT_TIMEOUT_MS = 30_000;

@Module({})
export class DatabaseModule {
  static forRoot(entities: NonNullable<DataSourceOptions['entities']>): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          inject: [APP_CONFIG],
          // autoLoadEntities: a lib's module can add its entities with
          // TypeOrmModule.forFeature instead of joining this list (agents do).
          useFactory: (config: AppConfig) => ({
            ...databaseOptions(config, entities, [], { statementTimeoutMs: APP_STATEMENT_TIMEOUT_MS }),
            autoLoadEntities: true,
          }),
        }),
      ],
      providers: [DatabaseProbe],
      exports: [TypeOrmModule, DatabaseProbe],
    };
  }
}
