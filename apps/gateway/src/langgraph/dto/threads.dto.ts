import { ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, ArrayMaxSize, IsArray, IsIn, IsInt, IsObject, IsOptional, IsString, Max, Min } from 'class-validator';

export const THREAD_SELECT_FIELDS = [
  'thread_id',
  'created_at',
  'updated_at',
  'state_updated_at',
  'metadata',
  'config',
  'context',
  'status',
  'values',
  'interrupts',
  'error',
] as const;
export type ThreadSelectField = (typeof THREAD_SELECT_FIELDS)[number];

const THREAD_STATUSES = ['idle', 'busy', 'interrupted', 'error'] as const;
const THREAD_SORT_FIELDS = ['thread_id', 'status', 'created_at', 'updated_at', 'state_updated_at'] as const;
const NOT_SUPPORTED = 'Not supported: a value is refused with 400 UNSUPPORTED_OPTION.';

// Bodies of the thread routes, as @langchain/langgraph-sdk sends them (snake_case).
// Declared-but-unsupported options are refused by name in the service.
export class CreateThreadDto {
  // Checked in the service (INVALID_THREAD_ID), as on the routes.
  @ApiPropertyOptional({ format: 'uuid', description: 'The id to give the thread (a UUID; 400 INVALID_THREAD_ID otherwise). Default: a new UUID.' })
  @IsOptional() @IsString()
  thread_id?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @IsOptional() @IsObject()
  metadata?: Record<string, unknown>;

  @ApiPropertyOptional({ enum: ['raise', 'do_nothing'], default: 'raise', description: 'When thread_id is taken: raise answers 409 THREAD_EXISTS, do_nothing returns the existing thread.' })
  @IsOptional() @IsIn(['raise', 'do_nothing'])
  if_exists?: 'raise' | 'do_nothing';

  @ApiPropertyOptional({ type: 'array', items: { type: 'object', additionalProperties: true }, description: `${NOT_SUPPORTED} An empty list is accepted.` })
  @Allow()
  supersteps?: unknown;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: `${NOT_SUPPORTED} Threads are kept until deleted.` })
  @Allow()
  ttl?: unknown;
}

export class PatchThreadDto {
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: "Keys merged into the thread's metadata." })
  @IsOptional() @IsObject()
  metadata?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: `${NOT_SUPPORTED} Threads are kept until deleted.` })
  @Allow()
  ttl?: unknown;
}

export class SearchThreadsDto {
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Only threads whose metadata contains every key/value given.' })
  @IsOptional() @IsObject()
  metadata?: Record<string, unknown>;

  @ApiPropertyOptional({ type: [String], maxItems: 1000, description: 'Only these thread ids.' })
  @IsOptional() @IsArray() @ArrayMaxSize(1000) @IsString({ each: true })
  ids?: string[];

  @ApiPropertyOptional({ enum: THREAD_STATUSES, description: 'Threads here are idle, busy or error; interrupted matches none.' })
  @IsOptional() @IsIn(['idle', 'busy', 'interrupted', 'error'])
  status?: 'idle' | 'busy' | 'interrupted' | 'error';

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 1000, default: 10 })
  @IsOptional() @IsInt() @Min(1) @Max(1000)
  limit?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, default: 0 })
  @IsOptional() @IsInt() @Min(0)
  offset?: number;

  @ApiPropertyOptional({ enum: THREAD_SORT_FIELDS, default: 'created_at', description: 'state_updated_at sorts as updated_at.' })
  @IsOptional() @IsIn(['thread_id', 'status', 'created_at', 'updated_at', 'state_updated_at'])
  sort_by?: 'thread_id' | 'status' | 'created_at' | 'updated_at' | 'state_updated_at';

  @ApiPropertyOptional({ enum: ['asc', 'desc'], default: 'desc' })
  @IsOptional() @IsIn(['asc', 'desc'])
  sort_order?: 'asc' | 'desc';

  @ApiPropertyOptional({ type: 'array', items: { type: 'string', enum: [...THREAD_SELECT_FIELDS] }, description: 'Only these fields of each thread (default: all).' })
  @IsOptional() @IsArray() @IsIn(THREAD_SELECT_FIELDS, { each: true })
  select?: ThreadSelectField[];

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: `${NOT_SUPPORTED} An empty object is accepted; filter by metadata or status.` })
  @Allow()
  values?: unknown;
}

export class CountThreadsDto {
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Only threads whose metadata contains every key/value given.' })
  @IsOptional() @IsObject()
  metadata?: Record<string, unknown>;

  @ApiPropertyOptional({ enum: THREAD_STATUSES, description: 'Threads here are idle, busy or error; interrupted matches none.' })
  @IsOptional() @IsIn(['idle', 'busy', 'interrupted', 'error'])
  status?: 'idle' | 'busy' | 'interrupted' | 'error';

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: `${NOT_SUPPORTED} An empty object is accepted; filter by metadata or status.` })
  @Allow()
  values?: unknown;
}
