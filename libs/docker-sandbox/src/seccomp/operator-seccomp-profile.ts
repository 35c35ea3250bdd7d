import { ConfigError } from '@drydock/core';

// An operator's replacement for the built-in profile (SANDBOX_SECCOMP_PROFILE), checked
// once at boot: a seccomp profile object that denies something. One that allows every
// call is "unconfined" under another name, and is refused like it.
export function parseOperatorSeccompProfile(text: string, path: string): string {
  let profile: unknown;
  try {
    profile = JSON.parse(text);
  } catch {
    throw new ConfigError(`SANDBOX_SECCOMP_PROFILE: ${path} is not JSON`);
  }
  if (typeof profile !== 'object' || profile === null || Array.isArray(profile)) {
    throw new ConfigError(`SANDBOX_SECCOMP_PROFILE: ${path} is not a seccomp profile (a JSON object)`);
  }
  const { defaultAction, syscalls = [] } = profile as { defaultAction?: unknown; syscalls?: unknown };
  if (typeof defaultAction !== 'string' || !defaultAction.startsWith('SCMP_ACT_')) {
    throw new ConfigError(`SANDBOX_SECCOMP_PROFILE: ${path} has no defaultAction (e.g. "SCMP_ACT_ERRNO")`);
  }
  if (!Array.isArray(syscalls)) {
    throw new ConfigError(`SANDBOX_SECCOMP_PROFILE: ${path}: syscalls must be a list of rules`);
  }
  const permissive = (action: unknown) => action === 'SCMP_ACT_ALLOW' || action === 'SCMP_ACT_LOG';
  if (permissive(defaultAction) && syscalls.every((rule: { action?: unknown }) => permissive(rule?.action))) {
    throw new ConfigError(`SANDBOX_SECCOMP_PROFILE: ${path} allows every call, which is the same as unconfined: refused`);
  }
  return JSON.stringify(profile);
}
