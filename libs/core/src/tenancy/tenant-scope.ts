import { DrydockError } from '../errors/drydock.error.js';
import type { TenantLimits } from './tenant-limits.js';

// Every repository method takes the tenant first and calls this, so a missing tenant
// is a loud programming error rather than a query across all tenants.
export function assertTenant(tenantId: string | undefined | null): asserts tenantId is string {
  if (typeof tenantId !== 'string' || tenantId.length === 0) {
    throw new DrydockError('TENANT_REQUIRED', 'A tenant scope is required for this operation.', 500);
  }
}

// The caller's identity as resolved by the gateway's auth guard.
export interface TenantPrincipal {
  tenantId: string;
  tenantName: string;
  limits: TenantLimits;
}
