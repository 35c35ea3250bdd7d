import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsISO8601, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';

export const EXECUTION_STATUSES = ['queued', 'running', 'ok', 'error', 'timeout', 'memory', 'killed'] as const;

const TENANT_ID = /^ten_[0-9a-z]{20}$/;
const ISO_8601 = 'An ISO 8601 date or date-time, e.g. 2025-01-31 or 2025-01-31T12:00:00Z.';

// GET /admin/executions?tenantId=&status=&from=&to=&limit=&before=
export class AdminExecutionsQueryDto {
  @ApiPropertyOptional({ pattern: TENANT_ID.source, description: "Only this tenant's executions." })
  @IsOptional() @IsString() @Matches(TENANT_ID, { message: 'tenantId must be a tenant id (ten_…)' })
  tenantId?: string;

  @ApiPropertyOptional({ enum: EXECUTION_STATUSES })
  @IsOptional() @IsIn(EXECUTION_STATUSES, { message: `status must be one of ${EXECUTION_STATUSES.join(', ')}` })
  status?: (typeof EXECUTION_STATUSES)[number];

  // created_at in [from, to), ISO 8601.
  @ApiPropertyOptional({ description: `Created at or after this instant. ${ISO_8601}` })
  @IsOptional() @IsISO8601({ strict: true }, { message: 'from must be an ISO 8601 date or time' })
  from?: string;

  @ApiPropertyOptional({ description: `Created before this instant. ${ISO_8601}` })
  @IsOptional() @IsISO8601({ strict: true }, { message: 'to must be an ISO 8601 date or time' })
  to?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 500, default: 100 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(500)
  limit?: number;

  // The `next` of the previous page.
  @ApiPropertyOptional({ maxLength: 200, description: 'The `next` of the previous page (400 INVALID_CURSOR otherwise).' })
  @IsOptional() @IsString() @MaxLength(200)
  before?: string;
}

// GET /admin/usage?from=&to=&tenantId=
export class AdminUsageQueryDto {
  @ApiPropertyOptional({ pattern: TENANT_ID.source, description: "Only this tenant's usage." })
  @IsOptional() @IsString() @Matches(TENANT_ID, { message: 'tenantId must be a tenant id (ten_…)' })
  tenantId?: string;

  @ApiPropertyOptional({ description: `Start of the range; default 30 days before \`to\`. ${ISO_8601}` })
  @IsOptional() @IsISO8601({ strict: true }, { message: 'from must be an ISO 8601 date or time' })
  from?: string;

  @ApiPropertyOptional({ description: `End of the range (exclusive); default now. At most 366 days after \`from\`. ${ISO_8601}` })
  @IsOptional() @IsISO8601({ strict: true }, { message: 'to must be an ISO 8601 date or time' })
  to?: string;
}
