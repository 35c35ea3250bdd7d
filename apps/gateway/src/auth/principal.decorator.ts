import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { TenantPrincipal } from '@drydock/core';
import type { TenantRequest } from './tenant-auth.guard.js';

export const Principal = createParamDecorator(
  (_data: unknown, context: ExecutionContext): TenantPrincipal =>
    context.switchToHttp().getRequest<TenantRequest>().principal,
);
