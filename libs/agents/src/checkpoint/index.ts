export * from './cached-postgres.saver.js';
export * from './message-caching.serializer.js';
export * from './tenant-checkpoints.repository.js';
export * from './checkpoint-store.js';
export * from './latest-checkpoint.js';
export * from './checkpoint-carrier.js';
