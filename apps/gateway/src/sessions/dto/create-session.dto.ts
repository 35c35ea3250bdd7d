import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { SANDBOX_TIERS, THREAD_ID_PATTERN, THREAD_ID_RULE, type SandboxTier } from '@drydock/core';
import { DATASET_NAME_PATTERN } from '@drydock/sessions';
import { NetworkOption } from '../../http/network-option.js';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsInt,
  MaxLength,
  IsNumber,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';

export class SessionLimitsDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 32, maximum: 1_048_576, description: "Memory in MiB (clamped to the tenant's maximum)." })
  @IsOptional() @IsInt() @Min(32) @Max(1_048_576)
  memoryMb?: number;

  @ApiPropertyOptional({ minimum: 0.05, maximum: 256, description: "CPUs (clamped to the tenant's maximum)." })
  @IsOptional() @IsNumber() @Min(0.05) @Max(256)
  cpus?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 100, maximum: 86_400_000, description: 'Default time limit of one execution.' })
  @IsOptional() @IsInt() @Min(100) @Max(86_400_000)
  timeoutMs?: number;
}

const DATASET_NAME_MESSAGE = 'dataset name must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit';

export class SessionDatasetDto {
  @ApiProperty({ pattern: DATASET_NAME_PATTERN.source, description: 'A dataset of GET /v1/datasets.' })
  @IsString() @Matches(DATASET_NAME_PATTERN, { message: DATASET_NAME_MESSAGE })
  name: string;

  @ApiProperty({ enum: ['local_ro', 'staged'], description: 'local_ro: read-only at /data/<name>; staged: copied into /session/data/<name>.' })
  @IsIn(['local_ro', 'staged'], { message: 'mode must be "local_ro" (read-only at /data/<name>) or "staged" (copied into /session/data/<name>)' })
  mode: 'local_ro' | 'staged';
}

export class StageDatasetDto {
  @ApiProperty({ pattern: DATASET_NAME_PATTERN.source, description: 'A dataset of GET /v1/datasets.' })
  @IsString() @Matches(DATASET_NAME_PATTERN, { message: DATASET_NAME_MESSAGE })
  name: string;
}

export class CreateSessionDto {
  @ApiPropertyOptional({ pattern: THREAD_ID_PATTERN.source, description: `The conversation thread; a live session of the thread is returned (200) instead of a new one. ${THREAD_ID_RULE}.` })
  @IsOptional() @IsString() @Matches(THREAD_ID_PATTERN, { message: `threadId must be ${THREAD_ID_RULE}` })
  threadId?: string;

  @ApiPropertyOptional({ type: () => SessionLimitsDto })
  @IsOptional() @ValidateNested() @Type(() => SessionLimitsDto)
  limits?: SessionLimitsDto;

  @ApiPropertyOptional({ enum: ['tmpfs', 'bind'], default: 'tmpfs', description: 'bind needs SESSION_BIND_DIR on the deployment.' })
  @IsOptional() @IsIn(['tmpfs', 'bind'])
  storage?: 'tmpfs' | 'bind';

  @ApiPropertyOptional({ type: () => [SessionDatasetDto], maxItems: 32 })
  @IsOptional() @IsArray() @ArrayMaxSize(32) @ValidateNested({ each: true }) @Type(() => SessionDatasetDto)
  datasets?: SessionDatasetDto[];

  @ApiPropertyOptional({
    example: 'analytics',
    description: 'A template (GET /v1/templates): "name" for its newest ready version, "name:version" for that one. 404 TEMPLATE_NOT_FOUND, 409 TEMPLATE_NOT_READY.',
  })
  @IsOptional() @IsString() @MaxLength(80)
  template?: string;

  @NetworkOption()
  network?: unknown;

  @ApiPropertyOptional({ enum: SANDBOX_TIERS, description: "The isolation tier (docs/sessions.md): gvisor sessions can hibernate and be snapshotted. Default: the tenant's first allowed tier, else the deployment's. 422 TIER_NOT_AVAILABLE, TIER_NOT_ALLOWED." })
  @IsOptional() @IsIn(SANDBOX_TIERS)
  tier?: SandboxTier;

  @ApiPropertyOptional({ enum: ['hibernate', 'end'], description: "What the session comes to when idle: hibernate (a gvisor session, after SESSION_HIBERNATE_AFTER_MS; others end) or end (after SESSION_IDLE_TIMEOUT_MS). Default: the deployment's SESSION_IDLE_ACTION." })
  @IsOptional() @IsIn(['hibernate', 'end'])
  idleAction?: 'hibernate' | 'end';

  @ApiPropertyOptional({ example: 'snp_01J…', description: "A fork: the snapshot the session starts from, with its variables, processes and files, and its session's settings (send only threadId beside it: 400 INVALID_FORK). 404 SNAPSHOT_NOT_FOUND; 409 THREAD_HAS_SESSION for a thread with a live session." })
  @IsOptional() @IsString() @MaxLength(64)
  fromSnapshot?: string;
}

export class NarrowNetworkDto {
  @ApiProperty({ type: [String], maxItems: 100, example: ['pypi.org'], description: "The new allow list: each entry must already be allowed by the session's current one." })
  @IsArray() @ArrayMaxSize(100)
  allow: unknown[];
}
