import { applyDecorators, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { AdminAuthGuard } from '../auth/admin-auth.guard.js';
import { ApiKeyAuthGuard } from '../auth/api-key-auth.guard.js';
import { TenantAuthGuard } from '../auth/tenant-auth.guard.js';
import { ADMIN_AUTH_ERRORS, ApiErrors, TENANT_AUTH_ERRORS } from './api-errors.js';

// The security schemes of the document (openapi.document.ts names them).
export const TENANT_KEY_SCHEME = 'tenantKey';
export const TENANT_HEADER_SCHEME = 'tenantApiKeyHeader';
export const ADMIN_KEY_SCHEME = 'adminKey';

// A controller of tenant routes: the guard, its security scheme and its errors, together
// so the document cannot say a route is open when it is not.
export function TenantRoutes(tag: string): ClassDecorator {
  return applyDecorators(UseGuards(TenantAuthGuard), ApiBearerAuth(TENANT_KEY_SCHEME), ApiTags(tag), ApiErrors(TENANT_AUTH_ERRORS));
}

// The LangGraph-compatible routes also take the key as `x-api-key` (the SDK's header).
export function LangGraphRoutes(tag: string): ClassDecorator {
  return applyDecorators(
    UseGuards(ApiKeyAuthGuard),
    ApiBearerAuth(TENANT_KEY_SCHEME),
    ApiSecurity(TENANT_HEADER_SCHEME),
    ApiTags(tag),
    ApiErrors(TENANT_AUTH_ERRORS),
  );
}

export function AdminRoutes(tag: string): ClassDecorator {
  return applyDecorators(UseGuards(AdminAuthGuard), ApiBearerAuth(ADMIN_KEY_SCHEME), ApiTags(tag), ApiErrors(ADMIN_AUTH_ERRORS));
}
