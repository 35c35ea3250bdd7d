import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import type { TenantPrincipal } from '@drydock/core';
import { SnapshotsService, type SnapshotView } from '@drydock/sessions';
import { Principal } from '../auth/principal.decorator.js';
import { ApiErrors, VALIDATION_ERRORS } from '../openapi/api-errors.js';
import { TenantRoutes } from '../openapi/api-auth.js';

export class CreateSnapshotDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 60, description: 'How long it is kept, in seconds (at most, and by default, SNAPSHOT_RETENTION_S).' })
  @IsOptional() @IsInt() @Min(60) @Max(10 * 365 * 24 * 3600)
  ttlSeconds?: number;
}

export class SnapshotResponse implements SnapshotView {
  @ApiProperty({ example: 'snp_01J…' }) id: string;
  @ApiProperty({ description: 'The session it was taken of.' }) sessionId: string;
  @ApiProperty({ enum: ['runc', 'gvisor'] }) tier: SnapshotView['tier'];
  @ApiProperty({ type: 'integer', description: 'Bytes stored (compressed): counted against the tenant’s snapshot quota.' }) sizeBytes: number;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) expiresAt: string | null;
}

export class SnapshotListResponse {
  @ApiProperty({ type: () => [SnapshotResponse] }) snapshots: SnapshotResponse[];
}

// Snapshots of gvisor sessions, to fork from (POST /v1/sessions {fromSnapshot}).
@Controller()
@TenantRoutes('sessions')
export class SnapshotsController {
  constructor(private readonly snapshots: SnapshotsService) {}

  @Post('v1/sessions/:id/snapshots')
  @ApiOperation({
    summary: "Snapshot a session between runs: its variables, processes and files, kept to fork from; the session goes on",
  })
  @ApiCreatedResponse({ type: SnapshotResponse })
  @ApiErrors({
    ...VALIDATION_ERRORS,
    404: ['SESSION_NOT_FOUND'],
    409: ['SESSION_ENDED', 'SESSION_BUSY'],
    422: ['CHECKPOINT_NOT_AVAILABLE'],
    429: ['SNAPSHOT_QUOTA_EXCEEDED'],
    503: ['NO_WORKER_AVAILABLE', 'SESSION_MOVED'],
  })
  create(@Principal() principal: TenantPrincipal, @Param('id') id: string, @Body() dto: CreateSnapshotDto): Promise<SnapshotView> {
    return this.snapshots.create(principal.tenantId, id, { ttlSeconds: dto.ttlSeconds });
  }

  @Get('v1/snapshots')
  @ApiOperation({ summary: "The tenant's snapshots, newest first (expired ones are gone)" })
  @ApiOkResponse({ type: SnapshotListResponse })
  async list(@Principal() principal: TenantPrincipal): Promise<{ snapshots: SnapshotView[] }> {
    return { snapshots: await this.snapshots.list(principal.tenantId) };
  }

  @Get('v1/snapshots/:id')
  @ApiOperation({ summary: 'One snapshot' })
  @ApiOkResponse({ type: SnapshotResponse })
  @ApiErrors({ 404: ['SNAPSHOT_NOT_FOUND'] })
  get(@Principal() principal: TenantPrincipal, @Param('id') id: string): Promise<SnapshotView> {
    return this.snapshots.get(principal.tenantId, id);
  }

  @Delete('v1/snapshots/:id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a snapshot (sessions forked from it go on)' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors({ 404: ['SNAPSHOT_NOT_FOUND'] })
  async delete(@Principal() principal: TenantPrincipal, @Param('id') id: string): Promise<void> {
    await this.snapshots.delete(principal.tenantId, id);
  }
}
