import type { TenantLimits } from './tenant-limits.js';

export interface TenantRecord {
  id: string;
  name: string;
  limits: TenantLimits;
  createdAt: Date;
  updatedAt: Date;
  // When an operator suspended it; null while it is active.
  suspendedAt?: Date | null;
}

export interface TenantsRepository {
  create(tenant: { id: string; name: string; limits: TenantLimits }, key: ApiKeyRecord): Promise<TenantRecord>;
  findById(tenantId: string): Promise<TenantRecord | null>;
  list(): Promise<TenantRecord[]>;
  updateLimits(tenantId: string, limits: TenantLimits): Promise<TenantRecord | null>;
  // Revokes every active key of the tenant and stores the new one, atomically.
  rotateKey(tenantId: string, key: ApiKeyRecord): Promise<void>;
  findByKeyHash(keyHash: string): Promise<TenantRecord | null>;
  // Suspends (now) or resumes the tenant; null when there is no such tenant.
  setSuspended(tenantId: string, suspended: boolean): Promise<TenantRecord | null>;
  // Deletes the tenant row, and with it (foreign keys, ON DELETE CASCADE) every row the
  // tenant owns. False when there was none.
  delete(tenantId: string): Promise<boolean>;
}

export interface ApiKeyRecord {
  id: string;
  keyHash: string;
  keyPrefix: string;
}

export const TENANTS_REPOSITORY = Symbol('TENANTS_REPOSITORY');
