// @drydock/agents: the LangGraph agent, its tools, content extraction, eviction and
// backends. Modules are exported here as they land.
export * from './extraction/index.js';
export * from './backends/index.js';
export * from './eviction/index.js';
export * from './python-tools/index.js';
