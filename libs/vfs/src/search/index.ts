// The one search module (decision 008): glob and grep rules, the regex policy, the
// in-process matcher; used by VfsService and by every agent backend.
export * from './search-pattern.js';
export * from './search-glob.js';
export * from './search-result.js';
export * from './text-grep.js';
