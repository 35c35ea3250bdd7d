import type { AllowEntry } from '../policy/allow-entries.js';
import type { AllowedRange } from '../policy/address-rules.js';
import type { NetworkPolicy } from '../policy/network-policy.js';

// Whose connection it is: a session, or an item of a batch (whose policy is the batch's,
// fixed when it was submitted).
export interface EgressSubject {
  tenantId: string;
  sessionId: string | null;
  batchId?: string | null;
  batchItem?: number | null;
  fixedPolicy?: NetworkPolicy;
}

// What a subject may reach now: its entries the tenant's ceiling covers, and the private
// ranges operators allow it.
export interface EffectivePolicy {
  entries: readonly AllowEntry[];
  ranges: readonly AllowedRange[];
}

// Reads a subject's policy for each connection (so narrowing a live session applies to
// its next connection); null: no network.
export interface EgressPolicySource {
  policyFor(subject: EgressSubject): Promise<EffectivePolicy | null>;
}

export type EgressVerdict = 'allowed' | 'denied';

// One connection attempt (a CONNECT tunnel, or one plain HTTP request), as the audit
// log keeps it.
export interface EgressConnectionRecord {
  tenantId: string;
  sessionId: string | null;
  batchId: string | null;
  batchItem: number | null;
  workerId: string;
  host: string;
  port: number;
  // The address connected to (or refused); null when it was refused before resolving.
  address: string | null;
  verdict: EgressVerdict;
  // A sentence: the entry that allowed it, or why it was refused.
  reason: string;
  // The allow-list entry that matched; null when denied.
  rule: string | null;
  bytesIn: number;
  bytesOut: number;
  startedAt: Date;
  durationMs: number;
}

export interface EgressSink {
  record(connection: EgressConnectionRecord): void;
}
