export * from './cached-postgres.saver.js';
export * from './message-caching.serializer.js';
