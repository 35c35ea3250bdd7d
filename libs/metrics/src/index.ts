export * from './platform-metrics.js';
