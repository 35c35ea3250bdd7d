import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { TenantLimits } from './tenant-limits.js';

@Entity({ name: 'tenants' })
export class TenantEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'jsonb', default: () => "'{}'" })
  limits: TenantLimits;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  // Set while an operator has the tenant suspended.
  @Column({ name: 'suspended_at', type: 'timestamptz', nullable: true })
  suspendedAt: Date | null;
}

@Entity({ name: 'tenant_api_keys' })
export class TenantApiKeyEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'tenant_id', type: 'text' })
  tenantId: string;

  // SHA-256 of the key: keys are 160-bit random strings, so a fast hash is safe and
  // lets us look a key up by its hash in one indexed query.
  @Column({ name: 'key_hash', type: 'text', unique: true })
  keyHash: string;

  @Column({ name: 'key_prefix', type: 'text' })
  keyPrefix: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;
}
