import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { SANDBOX_TIERS, type NetworkCeiling, type SandboxTier, type TenantLimits } from '@drydock/core';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsInt, IsNotEmpty, IsNumber, IsOptional, IsString, Max, MaxLength, Min, ValidateNested } from 'class-validator';

// The hosts a tenant's sessions may ask to reach (docs/network.md).
export class NetworkCeilingDto implements NetworkCeiling {
  @ApiProperty({ type: [String], maxItems: 100, example: ['pypi.org', 'files.pythonhosted.org', '*.githubusercontent.com'], description: 'Host patterns: "host", "host:port", "*.domain", "*" (any name), an IP address. Ports 80 and 443 unless one is given.' })
  @IsArray() @ArrayMaxSize(100) @IsString({ each: true })
  allow: string[];

  @ApiPropertyOptional({ type: [String], maxItems: 100, example: ['10.20.0.0/16'], description: 'Private ranges (CIDR) its sessions may reach besides public addresses; loopback, link-local and private addresses are refused otherwise.' })
  @IsOptional() @IsArray() @ArrayMaxSize(100) @IsString({ each: true })
  ranges?: string[];
}

// A tenant's ceilings (docs/api.md, "Tenant limits"). Also the `limits` of a tenant in
// answers: what was set, without the platform defaults an absent key falls back to.
export class TenantLimitsDto implements TenantLimits {
  @ApiPropertyOptional({ type: 'integer', minimum: 32, description: "Most memory (MiB) a session's request is clamped to." })
  @IsOptional() @IsInt() @Min(32) memoryMb?: number;

  @ApiPropertyOptional({ minimum: 0.05, description: "Most CPUs a session's request is clamped to." })
  @IsOptional() @IsNumber() @Min(0.05) cpus?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 100, description: "Longest execution time limit (ms) a session's request is clamped to." })
  @IsOptional() @IsInt() @Min(100) timeoutMs?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 8, description: 'Most processes in a sandbox.' })
  @IsOptional() @IsInt() @Min(8) pids?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: "Most MiB of a session's tmpfs /session." })
  @IsOptional() @IsInt() @Min(1) sessionDiskMb?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 100_000, description: 'Live sessions at once (429 SESSION_QUOTA_EXCEEDED past it).' })
  @IsOptional() @IsInt() @Min(0) @Max(100_000) maxSessions?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, description: "Total bytes of the tenant's thread files (default VFS_MAX_TENANT_BYTES)." })
  @IsOptional() @IsInt() @Min(0) vfsBytes?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, description: 'Live files in one thread (default VFS_MAX_FILES_PER_THREAD); 422 TOO_MANY_FILES past it.' })
  @IsOptional() @IsInt() @Min(0) maxFilesPerThread?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, description: 'Stored artifacts at most (replaces ARTIFACTS_MAX_COUNT_PER_TENANT).' })
  @IsOptional() @IsInt() @Min(0) artifactCount?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, description: 'Bytes of stored artifacts at most (replaces ARTIFACTS_MAX_BYTES_PER_TENANT).' })
  @IsOptional() @IsInt() @Min(0) artifactBytes?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, description: 'How long each new artifact is kept; 0 keeps it until deleted (replaces ARTIFACTS_RETENTION_S).' })
  @IsOptional() @IsInt() @Min(0) artifactRetentionSeconds?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 10_000, description: "The tenant's batch items running at once, across its batches and all workers (default BATCH_TENANT_CONCURRENCY)." })
  @IsOptional() @IsInt() @Min(1) @Max(10_000) batchConcurrency?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 10_000_000, description: 'API requests per clock minute, all routes and gateways (default RATE_LIMIT_REQUESTS_PER_MINUTE); 429 RATE_LIMITED past it.' })
  @IsOptional() @IsInt() @Min(1) @Max(10_000_000) requestsPerMinute?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100_000, description: 'Executions running at once (default RATE_LIMIT_CONCURRENT_EXECUTIONS); 429 RATE_LIMITED past it.' })
  @IsOptional() @IsInt() @Min(1) @Max(100_000) concurrentExecutions?: number;

  @ApiPropertyOptional({ type: () => NetworkCeilingDto, nullable: true, description: 'The network ceiling: hosts its sessions may ask for (400 INVALID_NETWORK_POLICY for a bad entry). Absent: no network; null in a PATCH removes it.' })
  @IsOptional() @ValidateNested() @Type(() => NetworkCeilingDto)
  network?: NetworkCeilingDto;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, description: 'Snapshots kept at once (default SNAPSHOT_MAX_COUNT_PER_TENANT); 429 SNAPSHOT_QUOTA_EXCEEDED past it.' })
  @IsOptional() @IsInt() @Min(0) snapshotCount?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, description: "Bytes of the tenant's snapshots, compressed (default SNAPSHOT_MAX_BYTES_PER_TENANT)." })
  @IsOptional() @IsInt() @Min(0) snapshotBytes?: number;

  @ApiPropertyOptional({ enum: SANDBOX_TIERS, isArray: true, example: ['gvisor'], description: "The isolation tiers its sessions may run on, the first their default (docs/sessions.md). Absent: those the deployment offers. ['gvisor'] keeps a tenant's code under gVisor." })
  @IsOptional() @IsArray() @ArrayMinSize(1) @ArrayMaxSize(2) @IsIn(SANDBOX_TIERS, { each: true })
  tiers?: SandboxTier[];
}

export class CreateTenantDto {
  @ApiProperty({ maxLength: 200, example: 'acme' })
  @IsString() @IsNotEmpty() @MaxLength(200)
  name: string;

  @ApiPropertyOptional({ type: () => TenantLimitsDto })
  @IsOptional() @ValidateNested() @Type(() => TenantLimitsDto)
  limits?: TenantLimitsDto;
}

export class UpdateTenantDto {
  @ApiProperty({ type: () => TenantLimitsDto, description: "Merged into the tenant's limits: keys left out keep their value." })
  @ValidateNested() @Type(() => TenantLimitsDto)
  limits: TenantLimitsDto;
}
