import { unwrap, type Transport } from './http.js';
import type { Tenant, TenantLimits, TenantWithKey } from './types.js';

// Operator calls (the admin key): tenants and their keys.
export class Tenants {
  constructor(private readonly http: Transport) {}

  // Creates a tenant; its API key is in the answer, shown once.
  async create(name: string, limits?: TenantLimits): Promise<TenantWithKey> {
    return unwrap(this.http.api.POST('/admin/tenants', { body: { name, limits } }));
  }

  async list(): Promise<Tenant[]> {
    return (await unwrap(this.http.api.GET('/admin/tenants', {}))).tenants;
  }

  async get(id: string): Promise<Tenant> {
    return unwrap(this.http.api.GET('/admin/tenants/{id}', { params: { path: { id } } }));
  }
}
