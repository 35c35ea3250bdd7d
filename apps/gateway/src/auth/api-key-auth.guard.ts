import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AuthError } from './auth.errors.js';
import { bearerToken } from './bearer-token.js';
import { TenantAuthGuard } from './tenant-auth.guard.js';

// The tenant guard of the LangGraph-compatible routes: @langchain/langgraph-sdk sends
// the key as `x-api-key`, so that header is accepted besides `Authorization: Bearer`.
@Injectable()
export class ApiKeyAuthGuard extends TenantAuthGuard {
  protected override token(req: FastifyRequest): string | null {
    const bearer = bearerToken(req);
    if (bearer) return bearer;
    const header = req.headers['x-api-key'];
    const value = (Array.isArray(header) ? header[0] : header)?.trim();
    return value ? value : null;
  }

  protected override missing(): AuthError {
    return new AuthError('UNAUTHORIZED', 'Send an API key as "x-api-key: <key>" or "Authorization: Bearer <key>".', 401);
  }
}
