import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AGENT_DEFINITION_ENTITIES } from './agent.entity.js';
import { AGENTS_REPOSITORY } from './agents.repository.js';
import { TypeOrmAgentsRepository } from './typeorm-agents.repository.js';

// The agents table: registers its entity with the app's DataSource (DatabaseModule
// loads the entities of forFeature modules) and binds AGENTS_REPOSITORY. The app adds
// AgentDefinitionsService and a PYTHON_SCHEMA_DERIVER (in the gateway:
// SessionPythonSchemaDeriver, which needs SessionsService and SessionExecutionsService).
@Module({
  imports: [TypeOrmModule.forFeature(AGENT_DEFINITION_ENTITIES)],
  providers: [{ provide: AGENTS_REPOSITORY, useClass: TypeOrmAgentsRepository }],
  exports: [AGENTS_REPOSITORY],
})
export class AgentDefinitionsModule {}
