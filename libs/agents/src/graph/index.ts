export * from './agent-state.js';
export * from './run-scope.js';
export * from './resolved-agent.js';
export * from './model.node.js';
export * from './tool.node.js';
export * from './agent-graph.js';
export * from './runnable-context.js';
