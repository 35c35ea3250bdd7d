export * from './artifacts.errors.js';
export * from './artifacts.repository.js';
export * from './typeorm-artifacts.repository.js';
export * from './blob-store.js';
export * from './artifact-mime.js';
export * from './artifacts.service.js';
export * from './artifacts.module.js';
export * from './signing/url-signer.js';
