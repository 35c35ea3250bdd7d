export * from './backend-protocol.js';
export * from './backend.errors.js';
export { readTextWindow } from './backend-read.js';
export * from './store-backend.js';
export * from './state-backend.js';
export * from './filesystem-backend.js';
export * from './composite-backend.js';
export * from './backend-routes.js';
