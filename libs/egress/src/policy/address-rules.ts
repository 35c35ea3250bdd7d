import ipaddr from 'ipaddr.js';

// A range an operator allows (EGRESS_ALLOWED_RANGES, a tenant's limits.network.ranges).
export interface AllowedRange {
  text: string;
  range: [ipaddr.IPv4 | ipaddr.IPv6, number];
}

// "10.0.0.0/8", "fd00::/8", or one address (as /32 or /128); a sentence when not one.
export function parseRange(raw: unknown): AllowedRange | string {
  if (typeof raw !== 'string' || !raw.trim()) return 'a range must be a non-empty string';
  const text = raw.trim();
  try {
    const range = text.includes('/') ? ipaddr.parseCIDR(text) : (() => {
      const ip = ipaddr.process(text);
      return [ip, ip.kind() === 'ipv4' ? 32 : 128] as [ipaddr.IPv4 | ipaddr.IPv6, number];
    })();
    const [ip, bits] = range;
    const address = ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? (ip as ipaddr.IPv6).toIPv4Address() : ip;
    const width = address.kind() === 'ipv4' && ip.kind() === 'ipv6' ? Math.max(0, bits - 96) : bits;
    return { text: `${address.toString()}/${width}`, range: [address, width] };
  } catch {
    return `"${text}" is not an IP range (CIDR such as 10.0.0.0/8) or an IP address`;
  }
}

export function parseRanges(list: readonly string[]): AllowedRange[] {
  return list.map(parseRange).filter((r): r is AllowedRange => typeof r !== 'string');
}

// Why an address may not be reached, or null when it may: anything but public unicast
// (loopback, link-local and so cloud metadata, private, carrier-grade NAT, unique local,
// multicast, reserved, and IPv6 forms that embed an IPv4 address) needs a range.
export function addressRefusal(address: string, ranges: readonly AllowedRange[]): string | null {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.process(address);
  } catch {
    return `"${address}" is not an address`;
  }
  if (ranges.some((r) => r.range[0].kind() === ip.kind() && ip.match(r.range as never))) return null;
  const kind = ip.range();
  if (kind === 'unicast') return null;
  return `${ip.toString()} is a ${describe(kind)} address, which sandboxes may not reach unless an operator allows its range`;
}

function describe(kind: string): string {
  switch (kind) {
    case 'loopback':
      return 'loopback';
    case 'linkLocal':
      return 'link-local (cloud metadata lives there)';
    case 'private':
    case 'uniqueLocal':
      return 'private';
    case 'carrierGradeNat':
      return 'carrier-grade NAT';
    case 'unspecified':
      return 'unspecified';
    case 'multicast':
    case 'broadcast':
      return kind;
    default:
      return `reserved (${kind})`;
  }
}
