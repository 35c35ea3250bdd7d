import { type DynamicModule, Module, type ModuleMetadata, type Provider } from '@nestjs/common';
import { resolve } from 'node:path';
import { APP_CONFIG, type AppConfig } from '@drydock/core';
import { ARTIFACTS_REPOSITORY } from './artifacts.repository.js';
import { ArtifactsService } from './artifacts.service.js';
import { BLOB_STORE, LocalBlobStore } from './blob-store.js';
import { TypeOrmArtifactsRepository } from './typeorm-artifacts.repository.js';

export const ARTIFACTS_PROVIDERS: Provider[] = [
  { provide: ARTIFACTS_REPOSITORY, useClass: TypeOrmArtifactsRepository },
  {
    provide: BLOB_STORE,
    inject: [APP_CONFIG],
    useFactory: (config: AppConfig) => new LocalBlobStore(resolve(config.artifacts.dir)),
  },
  ArtifactsService,
];

// Artifacts. Needs the global ConfigModule and the TypeORM connection from the module
// passed in `imports` (both apps: PlatformDataModule).
@Module({})
export class ArtifactsModule {
  static register(options: { imports: NonNullable<ModuleMetadata['imports']> }): DynamicModule {
    return {
      module: ArtifactsModule,
      imports: options.imports,
      providers: ARTIFACTS_PROVIDERS,
      exports: [ArtifactsService, ARTIFACTS_REPOSITORY, BLOB_STORE],
    };
  }
}
