import { DrydockError, type NetworkCeiling } from '@drydock/core';
import { parseAllowList, uncovered, type AllowEntry } from './allow-entries.js';
import { parseRange } from './address-rules.js';

// What a session, a batch or an agent definition asks for: the hosts its code may reach
// through the platform's proxy. Absent (or `false`): no network at all.
export interface NetworkPolicy {
  allow: string[];
}

function invalid(field: string, problems: string[]): DrydockError {
  return new DrydockError('INVALID_NETWORK_POLICY', `${field} is not a valid allow list: ${problems.join('; ')}.`, 400, { problems });
}

// A tenant ceiling as an operator sets it: parsed and normalized, or 400 naming each bad
// entry or range.
export function normalizeCeiling(ceiling: NetworkCeiling): NetworkCeiling {
  const parsed = parseAllowList(ceiling.allow ?? []);
  if ('problems' in parsed) throw invalid('limits.network.allow', parsed.problems);
  const problems: string[] = [];
  const ranges = (ceiling.ranges ?? []).map((r) => {
    const range = parseRange(r);
    if (typeof range === 'string') problems.push(range);
    return typeof range === 'string' ? '' : range.text;
  });
  if (problems.length) throw invalid('limits.network.ranges', problems);
  return { allow: parsed.entries.map((e) => e.text), ...(ranges.length ? { ranges: [...new Set(ranges)] } : {}) };
}

// The policy a caller asked for, checked against the tenant's ceiling: normalized, or 400
// for a malformed entry, 422 NETWORK_NOT_ALLOWED with the entries the ceiling does not
// cover (all of them when the tenant has no network).
export function policyWithin(ceiling: NetworkCeiling | undefined, requested: { allow: readonly unknown[] }): NetworkPolicy {
  const parsed = parseAllowList(requested.allow);
  if ('problems' in parsed) throw invalid('network.allow', parsed.problems);
  const limit = ceilingEntries(ceiling);
  const outside = uncovered(limit, parsed.entries).map((e) => e.text);
  if (outside.length) {
    const why = limit.length ? `outside this tenant's network ceiling (${limit.map((e) => e.text).join(', ')})` : 'not allowed: this tenant has no network (an operator sets limits.network)';
    throw new DrydockError('NETWORK_NOT_ALLOWED', `${outside.map((e) => `"${e}"`).join(', ')} ${outside.length === 1 ? 'is' : 'are'} ${why}.`, 422, {
      entries: outside,
    });
  }
  return { allow: parsed.entries.map((e) => e.text) };
}

// A narrower policy for a live session: every entry must already be allowed by `current`
// (422 NETWORK_NOT_ALLOWED naming the ones that would widen it).
export function narrowedPolicy(current: NetworkPolicy, requested: { allow: readonly unknown[] }): NetworkPolicy {
  const parsed = parseAllowList(requested.allow);
  if ('problems' in parsed) throw invalid('allow', parsed.problems);
  const outside = uncovered(entriesOf(current.allow), parsed.entries).map((e) => e.text);
  if (outside.length) {
    throw new DrydockError(
      'NETWORK_NOT_ALLOWED',
      `A live session's policy can only be narrowed: ${outside.map((e) => `"${e}"`).join(', ')} ${outside.length === 1 ? 'is' : 'are'} not in its current allow list (${current.allow.join(', ') || 'empty'}).`,
      422,
      { entries: outside },
    );
  }
  return { allow: parsed.entries.map((e) => e.text) };
}

// Entries of a list the platform wrote itself (already validated); a bad one is dropped.
export function entriesOf(list: readonly string[]): AllowEntry[] {
  const parsed = parseAllowList(list);
  return 'entries' in parsed ? parsed.entries : [];
}

export function ceilingEntries(ceiling: NetworkCeiling | undefined): AllowEntry[] {
  return ceiling ? entriesOf(ceiling.allow ?? []) : [];
}

// What a session may reach now: its own entries the tenant's current ceiling still
// covers (an operator lowering the ceiling narrows live sessions too).
export function effectiveEntries(policy: NetworkPolicy, ceiling: NetworkCeiling | undefined): AllowEntry[] {
  const limit = ceilingEntries(ceiling);
  const outside = new Set(uncovered(limit, entriesOf(policy.allow)).map((e) => e.text));
  return entriesOf(policy.allow).filter((e) => !outside.has(e.text));
}
