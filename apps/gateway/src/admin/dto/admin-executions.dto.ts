import { Type } from 'class-transformer';
import { IsIn, IsInt, IsISO8601, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';

export const EXECUTION_STATUSES = ['queued', 'running', 'ok', 'error', 'timeout', 'memory', 'killed'] as const;

// GET /admin/executions?tenantId=&status=&from=&to=&limit=&before=
export class AdminExecutionsQueryDto {
  @IsOptional() @IsString() @Matches(/^ten_[0-9a-z]{20}$/, { message: 'tenantId must be a tenant id (ten_…)' })
  tenantId?: string;

  @IsOptional() @IsIn(EXECUTION_STATUSES, { message: `status must be one of ${EXECUTION_STATUSES.join(', ')}` })
  status?: (typeof EXECUTION_STATUSES)[number];

  // created_at in [from, to), ISO 8601.
  @IsOptional() @IsISO8601({ strict: true }, { message: 'from must be an ISO 8601 date or time' })
  from?: string;

  @IsOptional() @IsISO8601({ strict: true }, { message: 'to must be an ISO 8601 date or time' })
  to?: string;

  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(500)
  limit?: number;

  // The `next` of the previous page.
  @IsOptional() @IsString() @MaxLength(200)
  before?: string;
}

// GET /admin/usage?from=&to=&tenantId=
export class AdminUsageQueryDto {
  @IsOptional() @IsString() @Matches(/^ten_[0-9a-z]{20}$/, { message: 'tenantId must be a tenant id (ten_…)' })
  tenantId?: string;

  @IsOptional() @IsISO8601({ strict: true }, { message: 'from must be an ISO 8601 date or time' })
  from?: string;

  @IsOptional() @IsISO8601({ strict: true }, { message: 'to must be an ISO 8601 date or time' })
  to?: string;
}
