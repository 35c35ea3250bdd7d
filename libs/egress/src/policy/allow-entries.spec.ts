import { entryCovers, matchingEntry, parseAllowEntry, parseAllowList, uncovered, type AllowEntry } from './allow-entries.js';
import { addressRefusal, parseRanges } from './address-rules.js';
import { effectiveEntries, narrowedPolicy, normalizeCeiling, policyWithin } from './network-policy.js';

const entry = (text: string) => parseAllowEntry(text) as AllowEntry;

describe('allow entries', () => {
  it('should parse names, ports, wildcards, "*" and IP literals into one normal form', () => {
    expect(entry('PyPI.org.')).toMatchObject({ text: 'pypi.org', kind: 'name', ports: [80, 443] });
    expect(entry('api.example.com:8443')).toMatchObject({ text: 'api.example.com:8443', ports: [8443] });
    expect(entry('*.githubusercontent.com')).toMatchObject({ kind: 'suffix', host: 'githubusercontent.com' });
    expect(entry('*')).toMatchObject({ kind: 'any' });
    expect(entry('203.0.113.7')).toMatchObject({ kind: 'ip', host: '203.0.113.7' });
    expect(entry('[::ffff:10.0.0.1]:8080')).toMatchObject({ kind: 'ip', host: '10.0.0.1', text: '10.0.0.1:8080' });
  });

  it('should refuse what is not a pattern, with a sentence each', () => {
    const parsed = parseAllowList(['ok.test', 'a*b.test', 'x:99999', '', 'exa mple.com', '*.', '127.1']);
    expect('problems' in parsed && parsed.problems).toHaveLength(6);
  });

  it('should cover a name by its wildcard and by "*" but never an IP by a name pattern', () => {
    expect(entryCovers(entry('*.example.com'), entry('a.b.example.com'))).toBe(true);
    expect(entryCovers(entry('*.example.com'), entry('example.com'))).toBe(false);
    expect(entryCovers(entry('*.example.com'), entry('*.b.example.com'))).toBe(true);
    expect(entryCovers(entry('*'), entry('*.example.com'))).toBe(true);
    expect(entryCovers(entry('*'), entry('203.0.113.7'))).toBe(false);
    expect(entryCovers(entry('example.com'), entry('example.com:8443'))).toBe(false);
    expect(entryCovers(entry('example.com'), entry('example.com:443'))).toBe(true);
    expect(uncovered([entry('pypi.org')], [entry('pypi.org'), entry('evil.test')]).map((e) => e.text)).toEqual(['evil.test']);
  });

  it('should match a connection by host and port', () => {
    const list = [entry('allowed.test:8080'), entry('*.pythonhosted.org')];
    expect(matchingEntry(list, 'allowed.test', 8080, false)?.text).toBe('allowed.test:8080');
    expect(matchingEntry(list, 'allowed.test', 80, false)).toBeNull();
    expect(matchingEntry(list, 'files.pythonhosted.org', 443, false)?.text).toBe('*.pythonhosted.org');
  });
});

describe('network policies', () => {
  it('should keep a session within its tenant ceiling: 422 NETWORK_NOT_ALLOWED with the entries', () => {
    expect(policyWithin({ allow: ['*.example.com'] }, { allow: ['a.example.com'] })).toEqual({ allow: ['a.example.com'] });
    expect(() => policyWithin({ allow: ['pypi.org'] }, { allow: ['pypi.org', 'evil.test'] })).toThrow(
      expect.objectContaining({ code: 'NETWORK_NOT_ALLOWED', status: 422, details: { entries: ['evil.test'] } }),
    );
    expect(() => policyWithin(undefined, { allow: ['pypi.org'] })).toThrow(expect.objectContaining({ code: 'NETWORK_NOT_ALLOWED' }));
    expect(() => policyWithin({ allow: ['*'] }, { allow: [42] })).toThrow(expect.objectContaining({ code: 'INVALID_NETWORK_POLICY', status: 400 }));
  });

  it('should only narrow a live policy', () => {
    expect(narrowedPolicy({ allow: ['*.example.com'] }, { allow: ['a.example.com'] })).toEqual({ allow: ['a.example.com'] });
    expect(() => narrowedPolicy({ allow: ['a.example.com'] }, { allow: ['b.example.com'] })).toThrow(expect.objectContaining({ code: 'NETWORK_NOT_ALLOWED' }));
  });

  it('should apply a lowered ceiling to live sessions', () => {
    expect(effectiveEntries({ allow: ['a.test', 'b.test'] }, { allow: ['a.test'] }).map((e) => e.text)).toEqual(['a.test']);
    expect(effectiveEntries({ allow: ['a.test'] }, undefined)).toEqual([]);
  });

  it('should normalize a ceiling and refuse bad ranges', () => {
    expect(normalizeCeiling({ allow: ['PyPI.org'], ranges: ['127.0.0.1', '10.0.0.0/8'] })).toEqual({ allow: ['pypi.org'], ranges: ['127.0.0.1/32', '10.0.0.0/8'] });
    expect(() => normalizeCeiling({ allow: [], ranges: ['nope'] })).toThrow(expect.objectContaining({ code: 'INVALID_NETWORK_POLICY' }));
  });
});

describe('address rules', () => {
  it('should refuse anything but public unicast unless a range allows it', () => {
    expect(addressRefusal('93.184.216.34', [])).toBeNull();
    for (const a of ['127.0.0.1', '169.254.169.254', '10.1.2.3', '172.16.0.1', '192.168.1.1', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '224.0.0.1']) {
      expect(addressRefusal(a, [])).toEqual(expect.any(String));
    }
    expect(addressRefusal('169.254.169.254', [])).toContain('link-local');
    expect(addressRefusal('127.0.0.1', parseRanges(['127.0.0.1/32']))).toBeNull();
    expect(addressRefusal('127.0.0.2', parseRanges(['127.0.0.1/32']))).toEqual(expect.any(String));
    expect(addressRefusal('::ffff:127.0.0.1', parseRanges(['127.0.0.0/8']))).toBeNull();
  });
});
