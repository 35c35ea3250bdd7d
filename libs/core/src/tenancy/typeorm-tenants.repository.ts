import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull } from 'typeorm';
import { assertTenant } from './tenant-scope.js';
import { TenantApiKeyEntity, TenantEntity } from './tenant.entity.js';
import type { TenantLimits } from './tenant-limits.js';
import type { ApiKeyRecord, TenantRecord, TenantsRepository } from './tenants.repository.js';

@Injectable()
export class TypeOrmTenantsRepository implements TenantsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async create(tenant: { id: string; name: string; limits: TenantLimits }, key: ApiKeyRecord) {
    return this.db.transaction(async (tx) => {
      const saved = await tx.getRepository(TenantEntity).save(tx.getRepository(TenantEntity).create(tenant));
      await tx.getRepository(TenantApiKeyEntity).insert({ ...key, tenantId: saved.id, revokedAt: null });
      return saved;
    });
  }

  findById(tenantId: string): Promise<TenantRecord | null> {
    assertTenant(tenantId);
    return this.db.getRepository(TenantEntity).findOneBy({ id: tenantId });
  }

  list(): Promise<TenantRecord[]> {
    return this.db.getRepository(TenantEntity).find({ order: { createdAt: 'ASC' } });
  }

  async updateLimits(tenantId: string, limits: TenantLimits): Promise<TenantRecord | null> {
    assertTenant(tenantId);
    await this.db.getRepository(TenantEntity).update({ id: tenantId }, { limits });
    return this.findById(tenantId);
  }

  async rotateKey(tenantId: string, key: ApiKeyRecord): Promise<void> {
    assertTenant(tenantId);
    await this.db.transaction(async (tx) => {
      const keys = tx.getRepository(TenantApiKeyEntity);
      await keys.update({ tenantId, revokedAt: IsNull() }, { revokedAt: new Date() });
      await keys.insert({ ...key, tenantId, revokedAt: null });
    });
  }

  // On every authenticated request: one indexed join, in plain SQL.
  async findByKeyHash(keyHash: string): Promise<TenantRecord | null> {
    const rows: { id: string; name: string; limits: TenantRecord['limits']; created_at: Date; updated_at: Date; suspended_at: Date | null }[] =
      await this.db.query(
        `SELECT t.id, t.name, t.limits, t.created_at, t.updated_at, t.suspended_at
           FROM tenant_api_keys k JOIN tenants t ON t.id = k.tenant_id
          WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
        [keyHash],
      );
    const row = rows[0];
    return row
      ? { id: row.id, name: row.name, limits: row.limits, createdAt: row.created_at, updatedAt: row.updated_at, suspendedAt: row.suspended_at }
      : null;
  }

  async setSuspended(tenantId: string, suspended: boolean): Promise<TenantRecord | null> {
    assertTenant(tenantId);
    // A suspension keeps its first time; resuming clears it.
    await this.db.query(
      `UPDATE tenants SET suspended_at = CASE WHEN $2 THEN coalesce(suspended_at, now()) ELSE NULL END, updated_at = now() WHERE id = $1`,
      [tenantId, suspended],
    );
    return this.findById(tenantId);
  }

  async delete(tenantId: string): Promise<boolean> {
    assertTenant(tenantId);
    const result = await this.db.getRepository(TenantEntity).delete({ id: tenantId });
    return (result.affected ?? 0) > 0;
  }
}
