import { Type } from 'class-transformer';
import { THREAD_ID_PATTERN, THREAD_ID_RULE } from '@drydock/core';
import { DATASET_NAME_PATTERN } from '@drydock/sessions';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';

export class SessionLimitsDto {
  @IsOptional() @IsInt() @Min(32) @Max(1_048_576)
  memoryMb?: number;

  @IsOptional() @IsNumber() @Min(0.05) @Max(256)
  cpus?: number;

  @IsOptional() @IsInt() @Min(100) @Max(86_400_000)
  timeoutMs?: number;
}

const DATASET_NAME_MESSAGE = 'dataset name must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit';

export class SessionDatasetDto {
  @IsString() @Matches(DATASET_NAME_PATTERN, { message: DATASET_NAME_MESSAGE })
  name: string;

  @IsIn(['local_ro', 'staged'], { message: 'mode must be "local_ro" (read-only at /data/<name>) or "staged" (copied into /session/data/<name>)' })
  mode: 'local_ro' | 'staged';
}

export class StageDatasetDto {
  @IsString() @Matches(DATASET_NAME_PATTERN, { message: DATASET_NAME_MESSAGE })
  name: string;
}

export class CreateSessionDto {
  @IsOptional() @IsString() @Matches(THREAD_ID_PATTERN, { message: `threadId must be ${THREAD_ID_RULE}` })
  threadId?: string;

  @IsOptional() @ValidateNested() @Type(() => SessionLimitsDto)
  limits?: SessionLimitsDto;

  @IsOptional() @IsIn(['tmpfs', 'bind'])
  storage?: 'tmpfs' | 'bind';

  @IsOptional() @IsArray() @ArrayMaxSize(32) @ValidateNested({ each: true }) @Type(() => SessionDatasetDto)
  datasets?: SessionDatasetDto[];

  @IsOptional() @IsBoolean()
  network?: boolean;
}
