import { Type } from 'class-transformer';
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
  @IsOptional() @IsString() @Matches(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/, {
    message: 'threadId must be 1-128 characters of letters, digits, _ . : - and start with a letter or digit',
  })
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
