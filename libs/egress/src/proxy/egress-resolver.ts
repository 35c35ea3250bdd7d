import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import ipaddr from 'ipaddr.js';

// The proxy's own name resolution: it resolves once, checks every address, then connects
// to the address it checked, so a name cannot resolve to another address between the
// check and the connection (DNS rebinding). Operator overrides (EGRESS_RESOLVE) first.
export class EgressResolver {
  constructor(
    private readonly overrides: Readonly<Record<string, readonly string[]>>,
    private readonly timeoutMs: number,
  ) {}

  async resolve(name: string): Promise<string[]> {
    const fixed = this.overrides[name];
    if (fixed) return fixed.map((a) => ipaddr.process(a).toString());
    let timer: NodeJS.Timeout | undefined;
    try {
      const answers = await Promise.race([
        lookup(name, { all: true, verbatim: true }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`resolving took longer than ${this.timeoutMs} ms`)), this.timeoutMs);
        }),
      ]);
      return answers.map((a) => ipaddr.process(a.address).toString());
    } finally {
      clearTimeout(timer);
    }
  }
}

// The platform's own services (PostgreSQL, Redis, the registry, the gateway, the
// worker's operator port, EGRESS_DENY): refused to every sandbox whatever its policy or
// ranges. An endpoint on this host (loopback, a wildcard or an interface address) is
// matched on every local address.
export class PlatformEndpoints {
  private readonly exact = new Set<string>();
  private readonly localPorts = new Set<number>();

  constructor(
    private readonly endpoints: readonly { host: string; port: number }[],
    private readonly resolver: EgressResolver,
  ) {}

  async refresh(): Promise<void> {
    const local = localAddresses();
    const exact = new Set<string>();
    const localPorts = new Set<number>();
    for (const { host, port } of this.endpoints) {
      const addresses = isIP(host.replace(/^\[|\]$/g, '')) ? [ipaddr.process(host.replace(/^\[|\]$/g, '')).toString()] : await this.resolver.resolve(host).catch(() => []);
      if (host === 'localhost' || addresses.some((a) => isLocal(a, local))) localPorts.add(port);
      for (const a of addresses) exact.add(`${a}|${port}`);
    }
    this.exact.clear();
    for (const e of exact) this.exact.add(e);
    this.localPorts.clear();
    for (const p of localPorts) this.localPorts.add(p);
  }

  isPlatform(address: string, port: number): boolean {
    return this.exact.has(`${address}|${port}`) || (this.localPorts.has(port) && isLocal(address, localAddresses()));
  }
}

function localAddresses(): Set<string> {
  const all = new Set<string>();
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) all.add(ipaddr.process(a.address.split('%')[0]!).toString());
  return all;
}

function isLocal(address: string, local: Set<string>): boolean {
  try {
    const range = ipaddr.process(address).range();
    return range === 'loopback' || range === 'unspecified' || local.has(address);
  } catch {
    return false;
  }
}

// host:port of a URL or a "host:port" string; null when it names none (a Unix socket).
export function endpointOf(value: string | undefined, defaultPort: number): { host: string; port: number } | null {
  if (!value) return null;
  try {
    const url = new URL(value.includes('://') ? value : `tcp://${value}`);
    if (!url.hostname) return null;
    return { host: url.hostname.replace(/^\[|\]$/g, ''), port: url.port ? Number(url.port) : defaultPort };
  } catch {
    return null;
  }
}
