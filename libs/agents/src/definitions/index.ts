// Agent definitions: stored per tenant, Python tool modules with schemas derived in a
// sandbox, export/import as hashed bundles.
export * from './agent-definition.js';
export * from './agent-definitions.errors.js';
export * from './agent.entity.js';
export * from './agents.repository.js';
export * from './typeorm-agents.repository.js';
export * from './python-schema-deriver.js';
export * from './session-python-schema-deriver.js';
export * from './agent-definitions.service.js';
export * from './agent-definitions.module.js';
export * from './template-names.js';
