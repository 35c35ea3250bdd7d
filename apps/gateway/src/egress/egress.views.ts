import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsISO8601, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import type { EgressLogEntry } from '@drydock/egress';
import { NetworkPolicyResponse } from '../sessions/dto/session.response.js';

const CURSOR = /^[0-9]{1,19}$/;

// One connection attempt as the API shows it (docs/api.md, "Network").
export interface ConnectionView {
  id: string;
  host: string;
  port: number;
  address: string | null;
  verdict: 'allowed' | 'denied';
  reason: string;
  rule: string | null;
  bytesIn: number;
  bytesOut: number;
  startedAt: string;
  durationMs: number;
  sessionId: string | null;
  batchId: string | null;
  batchItem: number | null;
}

export interface SessionNetworkView {
  policy: { allow: string[] } | null;
  connections: ConnectionView[];
  next: string | null;
}

export function toConnectionView(e: EgressLogEntry): ConnectionView {
  return {
    id: e.id,
    host: e.host,
    port: e.port,
    address: e.address,
    verdict: e.verdict,
    reason: e.reason,
    rule: e.rule,
    bytesIn: e.bytesIn,
    bytesOut: e.bytesOut,
    startedAt: e.startedAt.toISOString(),
    durationMs: e.durationMs,
    sessionId: e.sessionId,
    batchId: e.batchId,
    batchItem: e.batchItem,
  };
}

export class EgressLogQueryDto {
  @ApiPropertyOptional({ enum: ['allowed', 'denied'] })
  @IsOptional() @IsIn(['allowed', 'denied'], { message: 'verdict must be "allowed" or "denied"' })
  verdict?: 'allowed' | 'denied';

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 1000, default: 100 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000)
  limit?: number;

  @ApiPropertyOptional({ description: 'The `next` of the page before.' })
  @IsOptional() @IsString() @Matches(CURSOR, { message: 'before must be the `next` of a page before' })
  before?: string;
}

const ISO_8601 = 'An ISO 8601 date or date-time.';

// GET /admin/egress?tenantId=&sessionId=&batchId=&from=&to=&verdict=&limit=&before=
export class AdminEgressQueryDto extends EgressLogQueryDto {
  @ApiPropertyOptional({ description: "Only this tenant's connections." })
  @IsOptional() @IsString() @Matches(/^ten_[0-9a-z]{20}$/, { message: 'tenantId must be a tenant id (ten_…)' })
  tenantId?: string;

  @ApiPropertyOptional({ description: "Only this session's connections." })
  @IsOptional() @IsString() @Matches(/^ses_[0-9a-z]{20}$/, { message: 'sessionId must be a session id (ses_…)' })
  sessionId?: string;

  @ApiPropertyOptional({ description: "Only this batch's connections (its items')." })
  @IsOptional() @IsString() @Matches(/^bat_[0-9a-z]{20}$/, { message: 'batchId must be a batch id (bat_…)' })
  batchId?: string;

  @ApiPropertyOptional({ description: `Started at or after. ${ISO_8601}` })
  @IsOptional() @IsISO8601({ strict: true }, { message: 'from must be an ISO 8601 date or time' })
  from?: string;

  @ApiPropertyOptional({ description: `Started before. ${ISO_8601}` })
  @IsOptional() @IsISO8601({ strict: true }, { message: 'to must be an ISO 8601 date or time' })
  to?: string;
}

export class ConnectionResponse implements ConnectionView {
  @ApiProperty() id: string;
  @ApiProperty({ example: 'pypi.org' }) host: string;
  @ApiProperty({ type: 'integer', example: 443 }) port: number;
  @ApiProperty({ type: 'string', nullable: true, description: 'The address the proxy connected to (or refused).' }) address: string | null;
  @ApiProperty({ enum: ['allowed', 'denied'] }) verdict: 'allowed' | 'denied';
  @ApiProperty({ example: 'allowed by "pypi.org"', description: 'The rule that allowed it, or why it was refused.' }) reason: string;
  @ApiProperty({ type: 'string', nullable: true, description: 'The allow-list entry that matched.' }) rule: string | null;
  @ApiProperty({ type: 'integer', description: 'Bytes from the host to the sandbox.' }) bytesIn: number;
  @ApiProperty({ type: 'integer', description: 'Bytes from the sandbox to the host.' }) bytesOut: number;
  @ApiProperty({ format: 'date-time' }) startedAt: string;
  @ApiProperty({ type: 'integer' }) durationMs: number;
  @ApiProperty({ type: 'string', nullable: true }) sessionId: string | null;
  @ApiProperty({ type: 'string', nullable: true }) batchId: string | null;
  @ApiProperty({ type: 'integer', nullable: true }) batchItem: number | null;
}

export class SessionNetworkResponse implements SessionNetworkView {
  @ApiProperty({ type: () => NetworkPolicyResponse, nullable: true, description: 'null: the session has no network.' }) policy: NetworkPolicyResponse | null;
  @ApiProperty({ type: () => [ConnectionResponse], description: 'Newest first.' }) connections: ConnectionResponse[];
  @ApiProperty({ type: 'string', nullable: true, description: 'Pass as `before` for the next page; null on the last.' }) next: string | null;
}

export class AdminConnectionResponse extends ConnectionResponse {
  @ApiProperty() tenantId: string;
  @ApiProperty() workerId: string;
}

export class AdminEgressResponse {
  @ApiProperty({ type: () => [AdminConnectionResponse], description: 'Newest first.' }) connections: AdminConnectionResponse[];
  @ApiProperty({ type: 'string', nullable: true }) next: string | null;
}
