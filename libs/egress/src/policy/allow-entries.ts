import ipaddr from 'ipaddr.js';

// One entry of an allow list (docs/network.md, "Allow lists"):
//   host            pypi.org                 that name, ports 80 and 443
//   host:port       api.example.com:8443     that name, that port
//   *.domain        *.githubusercontent.com  any name under the domain (not the domain itself)
//   *               any name (a tenant ceiling an operator sets for "the public internet")
//   IP literal      203.0.113.7, [2001:db8::1]:8443  that address only; names never cover one
export interface AllowEntry {
  // As written, normalized (lower case, no trailing dot): what the audit names as the rule.
  text: string;
  kind: 'name' | 'suffix' | 'any' | 'ip';
  // The name, the domain after "*." or the normalized address; '' for `any`.
  host: string;
  ports: readonly number[];
}

export const DEFAULT_PORTS: readonly number[] = [80, 443];
export const MAX_ALLOW_ENTRIES = 100;
const MAX_ENTRY_LENGTH = 260;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

// A host name as the proxy compares it: lower case, no trailing dot; null when it is not
// a valid DNS name.
export function normalizeHostName(name: string): string | null {
  const host = name.trim().toLowerCase().replace(/\.$/, '');
  if (host.length === 0 || host.length > 253) return null;
  const labels = host.split('.');
  // A numeric last label ("127.1", "0x7f.1") is an address to the resolver, not a name.
  if (/^(0x[0-9a-f]*|[0-9]+)$/.test(labels[labels.length - 1]!)) return null;
  return labels.every((label) => LABEL.test(label)) ? host : null;
}

// An IP literal (bracketed or not) in its normalized form, IPv4-mapped IPv6 as IPv4;
// null when it is not one.
export function normalizeIp(text: string): string | null {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (!ipaddr.isValid(bare)) return null;
  // ipaddr.isValid accepts shorthand IPv4 ("127.1", "0x7f.1"); only the four-part form is a literal here.
  if (bare.includes('.') && !bare.includes(':') && !ipaddr.IPv4.isValidFourPartDecimal(bare)) return null;
  return ipaddr.process(bare).toString();
}

// Parses one entry; a sentence saying what is wrong when it is not one.
export function parseAllowEntry(raw: unknown): AllowEntry | string {
  if (typeof raw !== 'string' || raw.trim() === '') return 'an entry must be a non-empty string';
  const text = raw.trim().toLowerCase();
  if (text.length > MAX_ENTRY_LENGTH) return `"${raw.slice(0, 40)}…" is longer than ${MAX_ENTRY_LENGTH} characters`;
  let hostPart = text;
  let ports = DEFAULT_PORTS;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  const withPort = /^([^:]+):(\d+)$/.exec(text);
  if (bracketed) {
    hostPart = `[${bracketed[1]}]`;
    if (bracketed[2] !== undefined) ports = [Number(bracketed[2])];
  } else if (withPort) {
    hostPart = withPort[1]!;
    ports = [Number(withPort[2])];
  }
  if (ports.some((p) => !Number.isInteger(p) || p < 1 || p > 65535)) return `"${raw}" has a port outside 1-65535`;
  const ip = normalizeIp(hostPart);
  if (ip) return { text: ports === DEFAULT_PORTS ? ip : `${ip.includes(':') ? `[${ip}]` : ip}:${ports[0]}`, kind: 'ip', host: ip, ports };
  if (bracketed) return `"${raw}" is not an IP address`;
  const suffix = ports === DEFAULT_PORTS ? '' : `:${ports[0]}`;
  if (hostPart === '*') return { text: `*${suffix}`, kind: 'any', host: '', ports };
  if (hostPart.startsWith('*.')) {
    const domain = normalizeHostName(hostPart.slice(2));
    if (!domain) return `"${raw}" is not "*." followed by a domain name`;
    return { text: `*.${domain}${suffix}`, kind: 'suffix', host: domain, ports };
  }
  if (hostPart.includes('*')) return `"${raw}": "*" is allowed only as a whole first label ("*.example.com") or alone`;
  const name = normalizeHostName(hostPart);
  if (!name) return `"${raw}" is not a host name, "*.domain", an IP address or one of those with ":port"`;
  return { text: `${name}${suffix}`, kind: 'name', host: name, ports };
}

// Parses a list; the problems, one sentence per bad entry, when any is bad.
export function parseAllowList(raw: readonly unknown[]): { entries: AllowEntry[] } | { problems: string[] } {
  const problems: string[] = [];
  const entries: AllowEntry[] = [];
  if (raw.length > MAX_ALLOW_ENTRIES) return { problems: [`an allow list has at most ${MAX_ALLOW_ENTRIES} entries (${raw.length} given)`] };
  for (const item of raw) {
    const parsed = parseAllowEntry(item);
    if (typeof parsed === 'string') problems.push(parsed);
    else if (!entries.some((e) => e.text === parsed.text)) entries.push(parsed);
  }
  return problems.length ? { problems } : { entries };
}

function hostCovers(outer: AllowEntry, inner: AllowEntry): boolean {
  if (outer.kind === 'ip' || inner.kind === 'ip') return outer.kind === inner.kind && outer.host === inner.host;
  switch (outer.kind) {
    case 'any':
      return true;
    case 'suffix':
      return (inner.kind === 'name' || inner.kind === 'suffix') && (inner.host === outer.host ? inner.kind === 'suffix' : inner.host.endsWith(`.${outer.host}`));
    case 'name':
      return inner.kind === 'name' && inner.host === outer.host;
  }
}

// Whether every host and port `inner` allows is allowed by `outer`.
export function entryCovers(outer: AllowEntry, inner: AllowEntry): boolean {
  return hostCovers(outer, inner) && inner.ports.every((p) => outer.ports.includes(p));
}

// The entries of `requested` no entry of `ceiling` covers.
export function uncovered(ceiling: readonly AllowEntry[], requested: readonly AllowEntry[]): AllowEntry[] {
  return requested.filter((entry) => !ceiling.some((c) => entryCovers(c, entry)));
}

// The first entry allowing a connection to `host` (a normalized name or IP) on `port`.
export function matchingEntry(entries: readonly AllowEntry[], host: string, port: number, isIp: boolean): AllowEntry | null {
  const target: AllowEntry = { text: host, kind: isIp ? 'ip' : 'name', host, ports: [port] };
  return entries.find((e) => entryCovers(e, target)) ?? null;
}
