import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';
import type { SandboxTier } from '@drydock/core';
import type { EffectiveLimits, SessionDataset, SessionNetwork } from '@drydock/execution';

// hibernated: no container; its checkpoint (hibernationId) is restored by the next job.
export type SessionStatus = 'starting' | 'ready' | 'lost' | 'hibernated' | 'ended';
export type SessionStorage = 'tmpfs' | 'bind';
export type SessionIdleAction = 'hibernate' | 'end';

@Entity({ name: 'sessions' })
@Index('sessions_tenant_created_idx', ['tenantId', 'createdAt'])
@Index('sessions_worker_status_idx', ['workerId', 'status'])
export class SessionEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'tenant_id', type: 'text' })
  tenantId: string;

  @Column({ name: 'thread_id', type: 'text' })
  threadId: string;

  @Column({ type: 'text' })
  status: SessionStatus;

  @Column({ name: 'worker_id', type: 'text' })
  workerId: string;

  @Column({ type: 'jsonb' })
  limits: EffectiveLimits;

  @Column({ type: 'text', default: 'tmpfs' })
  storage: SessionStorage;

  @Column({ type: 'jsonb', default: () => "'[]'" })
  datasets: SessionDataset[];

  // The template version it started from ("name:version") and that version's image in
  // the registry; null: the platform's image.
  @Column({ type: 'text', nullable: true })
  template: string | null;

  @Column({ type: 'text', nullable: true })
  image: string | null;

  // The hosts its code may reach through the egress proxy (docs/network.md); null: no
  // network. Narrowed in place while it runs, never widened.
  @Column({ type: 'jsonb', nullable: true })
  network: SessionNetwork | null;

  // Set by the worker once a container exists; a later container for the same session
  // means the interpreter state was lost.
  @Column({ name: 'container_id', type: 'text', nullable: true })
  containerId: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'last_used_at', type: 'timestamptz' })
  lastUsedAt: Date;

  @Column({ name: 'ended_at', type: 'timestamptz', nullable: true })
  endedAt: Date | null;

  @Column({ name: 'end_reason', type: 'text', nullable: true })
  endReason: string | null;

  @Column({ type: 'text', default: 'runc' })
  tier: SandboxTier;

  // The checkpoint a hibernated session resumes from (session_checkpoints).
  @Column({ name: 'hibernation_id', type: 'text', nullable: true })
  hibernationId: string | null;

  @Column({ name: 'hibernated_at', type: 'timestamptz', nullable: true })
  hibernatedAt: Date | null;

  // What it comes to when idle; null: the deployment's SESSION_IDLE_ACTION.
  @Column({ name: 'idle_action', type: 'text', nullable: true })
  idleAction: SessionIdleAction | null;
}

export const SESSIONS_ENTITIES = [SessionEntity];
