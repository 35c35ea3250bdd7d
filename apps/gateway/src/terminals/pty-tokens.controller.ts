import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOperation, ApiProperty } from '@nestjs/swagger';
import type { TenantPrincipal } from '@drydock/core';
import { SessionTerminalsService } from '@drydock/sessions';
import { Principal } from '../auth/principal.decorator.js';
import { TenantRoutes } from '../openapi/api-auth.js';
import { ApiErrors } from '../openapi/api-errors.js';

export class PtyTokenResponse {
  @ApiProperty({ example: 'pty_3q9…', description: 'Give it as `?token=` to GET /v1/sessions/:id/pty; one use.' }) token: string;
  @ApiProperty({ type: 'string', format: 'date-time', description: 'It is refused after this (60 s).' }) expiresAt: string;
}

// Tokens for browsers, which cannot send Authorization on a WebSocket: the page's
// backend asks for one with the tenant key and hands it to the page.
@Controller('v1/sessions/:id/pty-tokens')
@TenantRoutes('terminals')
export class PtyTokensController {
  constructor(private readonly terminals: SessionTerminalsService) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({
    summary: 'A one-use token that opens a terminal of this session (for browsers)',
    description: 'Valid 60 s, for one WebSocket to GET /v1/sessions/:id/pty?token=…; only its digest is stored.',
  })
  @ApiCreatedResponse({ type: PtyTokenResponse })
  @ApiErrors({ 404: ['SESSION_NOT_FOUND'], 409: ['SESSION_ENDED'] })
  create(@Principal() principal: TenantPrincipal, @Param('id') sessionId: string): Promise<PtyTokenResponse> {
    return this.terminals.createToken(principal.tenantId, sessionId);
  }
}
