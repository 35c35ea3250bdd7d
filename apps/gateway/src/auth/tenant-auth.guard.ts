import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { addToLogContext, TenantRateLimiter, TenantsService, type TenantPrincipal } from '@drydock/core';
import { AuthError } from './auth.errors.js';
import { bearerToken } from './bearer-token.js';
import { REQUEST_COUNTED_BY_HANDLER } from './request-counted-by-handler.decorator.js';

export interface TenantRequest extends FastifyRequest {
  principal: TenantPrincipal;
}

// Resolves the tenant from its API key. Every /v1 route runs behind this guard, and
// services receive the tenant id from it, never from the request body.
@Injectable()
export class TenantAuthGuard implements CanActivate {
  constructor(
    private readonly tenants: TenantsService,
    private readonly rateLimits: TenantRateLimiter,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<TenantRequest>();
    const counted = !this.reflector.get<boolean>(REQUEST_COUNTED_BY_HANDLER, context.getHandler());
    req.principal = await this.authenticate(req, { countRequest: counted });
    return true;
  }

  // The tenant of the request's key, by the rules of every /v1 route (unknown key,
  // suspended tenant, the request counted against its rate limit unless the handler
  // counts it): for routes outside Nest's controllers too (the terminal WebSocket).
  async authenticate(req: FastifyRequest, { countRequest }: { countRequest: boolean }): Promise<TenantPrincipal> {
    const token = this.token(req);
    if (!token) throw this.missing();
    const tenant = await this.tenants.authenticate(token);
    if (!tenant) throw AuthError.invalid();
    addToLogContext({ tenantId: tenant.id });
    if (tenant.suspendedAt) throw AuthError.suspended();
    if (countRequest) await this.rateLimits.admitRequest(tenant);
    return { tenantId: tenant.id, tenantName: tenant.name, limits: tenant.limits };
  }

  // Where the key is read from; subclasses accept other headers (api-key-auth.guard.ts).
  protected token(req: FastifyRequest): string | null {
    return bearerToken(req);
  }

  protected missing(): AuthError {
    return AuthError.missing();
  }
}
