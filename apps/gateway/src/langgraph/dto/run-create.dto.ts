import { Type } from 'class-transformer';
import {
  Allow,
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';

export class RunConfigDto {
  @IsOptional() @IsArray() @ArrayMaxSize(64) @IsString({ each: true }) @Length(1, 256, { each: true })
  tags?: string[];

  @IsOptional() @IsInt() @Min(1) @Max(10_000)
  recursion_limit?: number;

  @IsOptional() @IsObject()
  configurable?: Record<string, unknown>;

  @IsOptional() @IsObject()
  metadata?: Record<string, unknown>;
}

// The body of POST /threads/:id/runs/wait and /runs/stream, as @langchain/langgraph-sdk
// sends it (snake_case). Options this gateway does not implement are declared so that
// run-request.ts can refuse them by name instead of dropping them silently.
export class RunCreateDto {
  @IsString() @Length(1, 128)
  assistant_id: string;

  @IsOptional() @IsObject()
  input?: Record<string, unknown> | null;

  @IsOptional() @ValidateNested() @Type(() => RunConfigDto)
  config?: RunConfigDto;

  @IsOptional() @IsObject()
  metadata?: Record<string, unknown>;

  @IsOptional() @IsObject()
  context?: Record<string, unknown>;

  // A mode or a list of modes; checked in run-request.ts.
  @Allow()
  stream_mode?: unknown;

  @IsOptional() @IsBoolean()
  stream_subgraphs?: boolean;

  @IsOptional() @IsBoolean()
  stream_resumable?: boolean;

  @IsOptional() @IsString() @Length(1, 128)
  checkpoint_id?: string;

  @IsOptional() @IsObject()
  checkpoint?: Record<string, unknown>;

  @IsOptional() @IsIn(['create', 'reject'])
  if_not_exists?: 'create' | 'reject';

  @IsOptional() @IsIn(['reject', 'interrupt', 'rollback', 'enqueue'])
  multitask_strategy?: string;

  @IsOptional() @IsIn(['cancel', 'continue'])
  on_disconnect?: string;

  @IsOptional() @IsIn(['delete', 'keep'])
  on_completion?: string;

  @IsOptional() @IsBoolean()
  checkpoint_during?: boolean;

  @IsOptional() @IsIn(['sync', 'async', 'exit'])
  durability?: string;

  @Allow()
  command?: unknown;

  @Allow()
  interrupt_before?: unknown;

  @Allow()
  interrupt_after?: unknown;

  @Allow()
  webhook?: unknown;

  @IsOptional() @IsNumber()
  after_seconds?: number;

  @Allow()
  feedback_keys?: unknown;
}
