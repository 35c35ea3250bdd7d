export * from './container-spec.js';
export * from './docker-sandbox.js';
export * from './docker-sandbox.runtime.js';
export * from './session-archive.js';
export * from './seccomp/sandbox-seccomp.profile.js';
export * from './replica-identity.js';
export * from './templates/docker-template-builder.js';
export * from './templates/platform-runtime-volume.js';
