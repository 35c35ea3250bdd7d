import { Type } from 'class-transformer';
import { THREAD_ID_PATTERN, THREAD_ID_RULE } from '@drydock/core';
import {
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

export class CreateSessionDto {
  @IsOptional() @IsString() @Matches(THREAD_ID_PATTERN, { message: `threadId must be ${THREAD_ID_RULE}` })
  threadId?: string;

  @IsOptional() @ValidateNested() @Type(() => SessionLimitsDto)
  limits?: SessionLimitsDto;

  @IsOptional() @IsIn(['tmpfs', 'bind'])
  storage?: 'tmpfs' | 'bind';

  @IsOptional() @IsArray()
  datasets?: unknown[];

  @IsOptional() @IsBoolean()
  network?: boolean;
}
