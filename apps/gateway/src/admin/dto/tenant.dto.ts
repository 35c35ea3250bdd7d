import { Type } from 'class-transformer';
import { IsInt, IsNotEmpty, IsNumber, IsOptional, IsString, Max, MaxLength, Min, ValidateNested } from 'class-validator';

export class TenantLimitsDto {
  @IsOptional() @IsInt() @Min(32) memoryMb?: number;
  @IsOptional() @IsNumber() @Min(0.05) cpus?: number;
  @IsOptional() @IsInt() @Min(100) timeoutMs?: number;
  @IsOptional() @IsInt() @Min(8) pids?: number;
  @IsOptional() @IsInt() @Min(1) sessionDiskMb?: number;
  @IsOptional() @IsInt() @Min(0) @Max(100_000) maxSessions?: number;
  @IsOptional() @IsInt() @Min(0) vfsBytes?: number;
  @IsOptional() @IsInt() @Min(0) artifactCount?: number;
  @IsOptional() @IsInt() @Min(0) artifactBytes?: number;
  @IsOptional() @IsInt() @Min(0) artifactRetentionSeconds?: number;
  @IsOptional() @IsInt() @Min(1) @Max(10_000) batchConcurrency?: number;
  @IsOptional() @IsInt() @Min(1) @Max(10_000_000) requestsPerMinute?: number;
  @IsOptional() @IsInt() @Min(1) @Max(100_000) concurrentExecutions?: number;
}

export class CreateTenantDto {
  @IsString() @IsNotEmpty() @MaxLength(200)
  name: string;

  @IsOptional() @ValidateNested() @Type(() => TenantLimitsDto)
  limits?: TenantLimitsDto;
}

export class UpdateTenantDto {
  @ValidateNested() @Type(() => TenantLimitsDto)
  limits: TenantLimitsDto;
}
