import { ConfigError } from '@drydock/core';
import { parseOperatorSeccompProfile } from './operator-seccomp-profile.js';
import { SANDBOX_SECCOMP_PROFILE } from './sandbox-seccomp.profile.js';

describe(parseOperatorSeccompProfile.name, () => {
  it('should take a profile as compact JSON', () => {
    const text = JSON.stringify(SANDBOX_SECCOMP_PROFILE, null, 2);
    expect(parseOperatorSeccompProfile(text, '/etc/p.json')).toBe(JSON.stringify(SANDBOX_SECCOMP_PROFILE));
    const denylist = { defaultAction: 'SCMP_ACT_ALLOW', syscalls: [{ names: ['ptrace'], action: 'SCMP_ACT_ERRNO' }] };
    expect(JSON.parse(parseOperatorSeccompProfile(JSON.stringify(denylist), 'p'))).toEqual(denylist);
  });

  it.each([
    ['not JSON', '{', /is not JSON/],
    ['not an object', '[]', /not a seccomp profile/],
    ['without a default action', '{"syscalls":[]}', /no defaultAction/],
    ['with syscalls that are not a list', '{"defaultAction":"SCMP_ACT_ERRNO","syscalls":{}}', /must be a list/],
    ['allowing everything', '{"defaultAction":"SCMP_ACT_ALLOW"}', /same as unconfined/],
    ['allowing everything, rule by rule', '{"defaultAction":"SCMP_ACT_LOG","syscalls":[{"names":["read"],"action":"SCMP_ACT_ALLOW"}]}', /same as unconfined/],
  ])('should refuse a file %s, naming the variable', (_what, text, message) => {
    expect(() => parseOperatorSeccompProfile(text, '/etc/p.json')).toThrow(ConfigError);
    expect(() => parseOperatorSeccompProfile(text, '/etc/p.json')).toThrow(message);
    expect(() => parseOperatorSeccompProfile(text, '/etc/p.json')).toThrow(/^SANDBOX_SECCOMP_PROFILE: /);
  });
});
