import type { EgressConnectionRecord, EgressVerdict } from '../proxy/egress-types.js';

export const EGRESS_LOG_REPOSITORY = Symbol('EGRESS_LOG_REPOSITORY');

export interface EgressLogEntry extends EgressConnectionRecord {
  id: string;
}

export interface EgressLogFilter {
  tenantId?: string;
  sessionId?: string;
  batchId?: string;
  verdict?: EgressVerdict;
  from?: Date;
  to?: Date;
  // Newest first; rows older than this id (the `next` cursor of the page before).
  before?: string;
  limit: number;
}

export interface DailyEgress {
  tenantId: string;
  // UTC day, YYYY-MM-DD.
  day: string;
  bytesIn: number;
  bytesOut: number;
  allowed: number;
  denied: number;
}

export interface EgressLogRepository {
  append(records: readonly EgressConnectionRecord[]): Promise<void>;
  // Newest first.
  list(filter: EgressLogFilter): Promise<EgressLogEntry[]>;
  daily(from: Date, to: Date, tenantId: string | null): Promise<DailyEgress[]>;
  // Deletes rows of connections started before `before`; how many.
  prune(before: Date, limit: number): Promise<number>;
}
