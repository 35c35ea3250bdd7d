import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
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
import { CLIENT_STREAM_MODES } from '../run-request.js';

const FREE_FORM = { type: 'object', additionalProperties: true } as const;
const NOT_SUPPORTED = 'Not supported: a value is refused with 400 UNSUPPORTED_OPTION.';
const IGNORED = 'Accepted and ignored.';

export class RunConfigDto {
  @ApiPropertyOptional({ type: 'array', items: { type: 'string', minLength: 1, maxLength: 256 }, maxItems: 64, description: "Added to the run's tags." })
  @IsOptional() @IsArray() @ArrayMaxSize(64) @IsString({ each: true }) @Length(1, 256, { each: true })
  tags?: string[];

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 10_000,
    description: "Can lower the agent's step limit, not raise it (at most 1,000 when the agent sets none).",
  })
  @IsOptional() @IsInt() @Min(1) @Max(10_000)
  recursion_limit?: number;

  @ApiPropertyOptional({
    ...FREE_FORM,
    description: "Added to the run's configurable values; never replaces Drydock's (tenant, thread, agent, model). Keys thread_id, checkpoint_*, drydock_* and __* are dropped.",
  })
  @IsOptional() @IsObject()
  configurable?: Record<string, unknown>;

  @ApiPropertyOptional({ ...FREE_FORM, description: "Added to the run's metadata (keys drydock_* and __* are dropped)." })
  @IsOptional() @IsObject()
  metadata?: Record<string, unknown>;
}

// The body of POST /threads/:id/runs/wait and /runs/stream, as @langchain/langgraph-sdk
// sends it (snake_case). Options this gateway does not implement are declared so that
// run-request.ts can refuse them by name instead of dropping them silently.
export class RunCreateDto {
  @ApiProperty({ minLength: 1, maxLength: 128, example: 'agent', description: '"agent" (the built-in agent) or the id of one of the tenant\'s agent definitions.' })
  @IsString() @Length(1, 128)
  assistant_id: string;

  @ApiPropertyOptional({
    type: 'object',
    nullable: true,
    properties: {
      messages: {
        type: 'array',
        maxItems: 1000,
        items: FREE_FORM,
        description:
          'LangChain message dicts: {role: "user"|"assistant"|"system"|"tool", content} or {type: "human"|"ai"|"system"|"tool"|"remove", content, ...}; a tool message needs tool_call_id.',
      },
    },
    additionalProperties: true,
    description: 'The graph input, e.g. {"messages": [...]}; null or left out to resume the thread as it is.',
  })
  @IsOptional() @IsObject()
  input?: Record<string, unknown> | null;

  @ApiPropertyOptional({ type: () => RunConfigDto })
  @IsOptional() @ValidateNested() @Type(() => RunConfigDto)
  config?: RunConfigDto;

  @ApiPropertyOptional({ ...FREE_FORM, description: "Added to the run's metadata (keys drydock_* and __* are dropped)." })
  @IsOptional() @IsObject()
  metadata?: Record<string, unknown>;

  @ApiPropertyOptional({ ...FREE_FORM, description: 'Not supported: a non-empty object is refused with 400 UNSUPPORTED_OPTION; pass run settings in config.configurable.' })
  @IsOptional() @IsObject()
  context?: Record<string, unknown>;

  // A mode or a list of modes; checked in run-request.ts.
  @ApiPropertyOptional({
    oneOf: [
      { type: 'string', enum: [...CLIENT_STREAM_MODES] },
      { type: 'array', items: { type: 'string', enum: [...CLIENT_STREAM_MODES] } },
    ],
    default: 'values',
    description: 'runs/stream: the events to stream (one mode or a list); another mode is 400 INVALID_STREAM_MODE. runs/wait streams nothing.',
  })
  @Allow()
  stream_mode?: unknown;

  @ApiPropertyOptional({ description: IGNORED })
  @IsOptional() @IsBoolean()
  stream_subgraphs?: boolean;

  @ApiPropertyOptional({ description: IGNORED })
  @IsOptional() @IsBoolean()
  stream_resumable?: boolean;

  @ApiPropertyOptional({ format: 'uuid', minLength: 1, maxLength: 128, description: 'Run from this earlier checkpoint (a branch); not a UUID is 400 INVALID_CHECKPOINT_ID.' })
  @IsOptional() @IsString() @Length(1, 128)
  checkpoint_id?: string;

  @ApiPropertyOptional({
    type: 'object',
    properties: { checkpoint_id: { type: 'string', format: 'uuid' } },
    additionalProperties: true,
    description: '{checkpoint_id}: the same as checkpoint_id.',
  })
  @IsOptional() @IsObject()
  checkpoint?: Record<string, unknown>;

  @ApiPropertyOptional({ enum: ['create', 'reject'], default: 'reject', description: 'A thread that does not exist: create it, or reject with 404 THREAD_NOT_FOUND.' })
  @IsOptional() @IsIn(['create', 'reject'])
  if_not_exists?: 'create' | 'reject';

  @ApiPropertyOptional({
    enum: ['reject', 'interrupt', 'rollback', 'enqueue'],
    default: 'reject',
    description: 'Only reject (a second run on a busy thread is 409 THREAD_BUSY); the others are refused with 400 UNSUPPORTED_OPTION.',
  })
  @IsOptional() @IsIn(['reject', 'interrupt', 'rollback', 'enqueue'])
  multitask_strategy?: string;

  @ApiPropertyOptional({ enum: ['cancel', 'continue'], description: `${IGNORED} The run is always cancelled when its client disconnects.` })
  @IsOptional() @IsIn(['cancel', 'continue'])
  on_disconnect?: string;

  @ApiPropertyOptional({ enum: ['delete', 'keep'], description: IGNORED })
  @IsOptional() @IsIn(['delete', 'keep'])
  on_completion?: string;

  @ApiPropertyOptional({ description: IGNORED })
  @IsOptional() @IsBoolean()
  checkpoint_during?: boolean;

  @ApiPropertyOptional({ enum: ['sync', 'async', 'exit'], description: `${IGNORED} The deployment sets the checkpoint durability.` })
  @IsOptional() @IsIn(['sync', 'async', 'exit'])
  durability?: string;

  @ApiPropertyOptional({ ...FREE_FORM, description: `${NOT_SUPPORTED} Send new input instead.` })
  @Allow()
  command?: unknown;

  @ApiPropertyOptional({ type: [String], description: `${NOT_SUPPORTED} An empty list is accepted.` })
  @Allow()
  interrupt_before?: unknown;

  @ApiPropertyOptional({ type: [String], description: `${NOT_SUPPORTED} An empty list is accepted.` })
  @Allow()
  interrupt_after?: unknown;

  @ApiPropertyOptional({ type: 'string', format: 'uri', description: NOT_SUPPORTED })
  @Allow()
  webhook?: unknown;

  @ApiPropertyOptional({ description: 'Not supported: a value other than 0 is refused with 400 UNSUPPORTED_OPTION (runs start at once).' })
  @IsOptional() @IsNumber()
  after_seconds?: number;

  @ApiPropertyOptional({ type: [String], description: IGNORED })
  @Allow()
  feedback_keys?: unknown;
}
