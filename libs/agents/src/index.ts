// @drydock/agents: the LangGraph agent, its tools, content extraction, eviction and
// backends. Modules are exported here as they land.
export * from './extraction/index.js';
export * from './backends/index.js';
export * from './eviction/index.js';
export * from './python-tools/index.js';
export * from './graph/index.js';
export * from './checkpoint/index.js';
export * from './models/index.js';
export * from './sandbox/session-sandbox.backend.js';
export * from './runtime/agent-runtime.js';
export * from './runtime/agent-resolver.js';
export * from './runtime/graph-agent.runtime.js';
export * from './runtime/default-instructions.js';
export * from './tools/index.js';
export * from './definitions/index.js';
export * from './runtime/agent-runtime.providers.js';
