export * from './tool-result-eviction.js';
export * from './backend-eviction-store.js';
