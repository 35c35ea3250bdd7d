import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

// One connection attempt through the egress proxy (docs/network.md, "What is logged").
@Entity({ name: 'egress_connections' })
@Index('egress_connections_session_idx', ['tenantId', 'sessionId', 'startedAt'])
@Index('egress_connections_started_idx', ['startedAt'])
@Index('egress_connections_batch_idx', ['batchId', 'startedAt'], { where: 'batch_id IS NOT NULL' })
export class EgressConnectionEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'tenant_id', type: 'text' })
  tenantId: string;

  @Column({ name: 'session_id', type: 'text', nullable: true })
  sessionId: string | null;

  @Column({ name: 'batch_id', type: 'text', nullable: true })
  batchId: string | null;

  @Column({ name: 'batch_item', type: 'integer', nullable: true })
  batchItem: number | null;

  @Column({ name: 'worker_id', type: 'text' })
  workerId: string;

  @Column({ type: 'text' })
  host: string;

  @Column({ type: 'integer' })
  port: number;

  @Column({ type: 'text', nullable: true })
  address: string | null;

  @Column({ type: 'text' })
  verdict: 'allowed' | 'denied';

  @Column({ type: 'text' })
  reason: string;

  @Column({ type: 'text', nullable: true })
  rule: string | null;

  @Column({ name: 'bytes_in', type: 'bigint', default: 0 })
  bytesIn: string;

  @Column({ name: 'bytes_out', type: 'bigint', default: 0 })
  bytesOut: string;

  @Column({ name: 'started_at', type: 'timestamptz' })
  startedAt: Date;

  @Column({ name: 'duration_ms', type: 'integer', default: 0 })
  durationMs: number;
}

export const EGRESS_ENTITIES = [EgressConnectionEntity];
