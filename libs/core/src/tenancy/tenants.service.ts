import { createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { NotFoundError } from '../errors/drydock.error.js';
import { newId } from '../ids.js';
import type { TenantLimits } from './tenant-limits.js';
import { TENANTS_REPOSITORY, type TenantRecord, type TenantsRepository } from './tenants.repository.js';

export interface IssuedKey {
  tenant: TenantRecord;
  apiKey: string;
}

const KEY_PREFIX = 'ddk_';

export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey, 'utf8').digest('hex');
}

@Injectable()
export class TenantsService {
  constructor(@Inject(TENANTS_REPOSITORY) private readonly tenants: TenantsRepository) {}

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
    return updated!;
  }

  async rotateKey(tenantId: string): Promise<IssuedKey> {
    const tenant = await this.get(tenantId);
    const { apiKey, record } = this.issueKey();
    await this.tenants.rotateKey(tenantId, record);
    return { tenant, apiKey };
  }

  // Returns the tenant owning an API key, or null for an unknown or revoked key.
  authenticate(apiKey: string): Promise<TenantRecord | null> {
    if (!apiKey.startsWith(KEY_PREFIX) || apiKey.length > 200) return Promise.resolve(null);
    return this.tenants.findByKeyHash(hashApiKey(apiKey));
  }

  private issueKey() {
    const apiKey = KEY_PREFIX + randomBytes(30).toString('base64url');
    return {
      apiKey,
      record: { id: newId('key'), keyHash: hashApiKey(apiKey), keyPrefix: apiKey.slice(0, 10) },
    };
  }
}
