import { createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { NotFoundError } from '../errors/drydock.error.js';
import { newId } from '../ids.js';
import type { TenantLimits } from './tenant-limits.js';
import { TENANTS_REPOSITORY, type TenantRecord, type TenantsRepository } from './tenants.repository.js';

export interface IssuedKey {
  tenant: TenantRecord;
  apiKey: string;
}

const KEY_PREFIX = 'ddk_';
const KEY_CACHE_MAX = 10_000;

export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey, 'utf8').digest('hex');
}

@Injectable()
export class TenantsService {
  // keyHash → tenant, for authCacheTtlMs. Only successful lookups are kept.
  private readonly keyCache = new Map<string, { tenant: TenantRecord; expiresAt: number }>();

  constructor(
    @Inject(TENANTS_REPOSITORY) private readonly tenants: TenantsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(name: string, limits: TenantLimits = {}): Promise<IssuedKey> {
    const { apiKey, record } = this.issueKey();
    const tenant = await this.tenants.create({ id: newId('ten'), name, limits }, record);
    return { tenant, apiKey };
  }

  list(): Promise<TenantRecord[]> {
    return this.tenants.list();
  }

  async get(tenantId: string): Promise<TenantRecord> {
    const tenant = await this.tenants.findById(tenantId);
    if (!tenant) throw new NotFoundError('TENANT_NOT_FOUND', `No tenant with id ${tenantId}.`);
    return tenant;
  }

  async updateLimits(tenantId: string, limits: TenantLimits): Promise<TenantRecord> {
    const current = await this.get(tenantId);
    const updated = await this.tenants.updateLimits(tenantId, { ...current.limits, ...limits });
    this.forgetTenant(tenantId);
    return updated!;
  }

  // Suspended: the tenant's keys answer 403 TENANT_SUSPENDED (on every gateway within
  // AUTH_CACHE_TTL_MS). Resumed: they work again.
  async setSuspended(tenantId: string, suspended: boolean): Promise<TenantRecord> {
    const updated = await this.tenants.setSuspended(tenantId, suspended);
    if (!updated) throw new NotFoundError('TENANT_NOT_FOUND', `No tenant with id ${tenantId}.`);
    this.forgetTenant(tenantId);
    return updated;
  }

  // Deletes the tenant's row and every row that belongs to it; what lives elsewhere
  // (containers, blobs, agent checkpoints) is the caller's to remove first.
  async deleteRecord(tenantId: string): Promise<void> {
    if (!(await this.tenants.delete(tenantId))) throw new NotFoundError('TENANT_NOT_FOUND', `No tenant with id ${tenantId}.`);
    this.forgetTenant(tenantId);
  }

  async rotateKey(tenantId: string): Promise<IssuedKey> {
    const tenant = await this.get(tenantId);
    const { apiKey, record } = this.issueKey();
    await this.tenants.rotateKey(tenantId, record);
    this.forgetTenant(tenantId);
    return { tenant, apiKey };
  }

  // Returns the tenant owning an API key, or null for an unknown or revoked key.
  async authenticate(apiKey: string): Promise<TenantRecord | null> {
    if (!apiKey.startsWith(KEY_PREFIX) || apiKey.length > 200) return null;
    const keyHash = hashApiKey(apiKey);
    const ttl = this.config.gateway.authCacheTtlMs;
    const cached = this.keyCache.get(keyHash);
    if (cached && cached.expiresAt > Date.now()) return cached.tenant;
    const tenant = await this.tenants.findByKeyHash(keyHash);
    if (tenant && ttl > 0) {
      if (this.keyCache.size >= KEY_CACHE_MAX) this.keyCache.clear();
      this.keyCache.set(keyHash, { tenant, expiresAt: Date.now() + ttl });
    }
    return tenant;
  }

  private forgetTenant(tenantId: string): void {
    for (const [hash, entry] of this.keyCache) if (entry.tenant.id === tenantId) this.keyCache.delete(hash);
  }

  private issueKey() {
    const apiKey = KEY_PREFIX + randomBytes(30).toString('base64url');
    return {
      apiKey,
      record: { id: newId('key'), keyHash: hashApiKey(apiKey), keyPrefix: apiKey.slice(0, 10) },
    };
  }
}
