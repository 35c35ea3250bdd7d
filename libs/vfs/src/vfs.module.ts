import { type DynamicModule, Module, type ModuleMetadata, type Provider } from '@nestjs/common';
import { THREAD_FILES_REPOSITORY } from './thread-files.repository.js';
import { TypeOrmThreadFilesRepository } from './typeorm-thread-files.repository.js';
import { VfsService } from './vfs.service.js';

export const VFS_PROVIDERS: Provider[] = [
  { provide: THREAD_FILES_REPOSITORY, useClass: TypeOrmThreadFilesRepository },
  VfsService,
];

// The thread filesystem. Needs the global ConfigModule (APP_CONFIG), a TypeORM
// connection whose entities include VFS_ENTITIES, and TENANTS_REPOSITORY from the
// module passed in `imports` (both apps: PlatformDataModule):
//   imports: [ConfigModule, PlatformDataModule, VfsModule.register({ imports: [PlatformDataModule] })]
@Module({})
export class VfsModule {
  static register(options: { imports: NonNullable<ModuleMetadata['imports']> }): DynamicModule {
    return {
      module: VfsModule,
      imports: options.imports,
      providers: VFS_PROVIDERS,
      exports: [VfsService, THREAD_FILES_REPOSITORY],
    };
  }
}
