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

// Bodies of the thread routes, as @langchain/langgraph-sdk sends them (snake_case).
// Declared-but-unsupported options are refused by name in the service.
export class CreateThreadDto {
  // Checked in the service (INVALID_THREAD_ID), as on the routes.
  @IsOptional() @IsString()
  thread_id?: string;

  @IsOptional() @IsObject()
  metadata?: Record<string, unknown>;

  @IsOptional() @IsIn(['raise', 'do_nothing'])
  if_exists?: 'raise' | 'do_nothing';

  @Allow()
  supersteps?: unknown;

  @Allow()
  ttl?: unknown;
}

export class PatchThreadDto {
  @IsOptional() @IsObject()
  metadata?: Record<string, unknown>;

  @Allow()
  ttl?: unknown;
}

export class SearchThreadsDto {
  @IsOptional() @IsObject()
  metadata?: Record<string, unknown>;

  @IsOptional() @IsArray() @ArrayMaxSize(1000) @IsString({ each: true })
  ids?: string[];

  @IsOptional() @IsIn(['idle', 'busy', 'interrupted', 'error'])
  status?: 'idle' | 'busy' | 'interrupted' | 'error';

  @IsOptional() @IsInt() @Min(1) @Max(1000)
  limit?: number;

  @IsOptional() @IsInt() @Min(0)
  offset?: number;

  @IsOptional() @IsIn(['thread_id', 'status', 'created_at', 'updated_at', 'state_updated_at'])
  sort_by?: 'thread_id' | 'status' | 'created_at' | 'updated_at' | 'state_updated_at';

  @IsOptional() @IsIn(['asc', 'desc'])
  sort_order?: 'asc' | 'desc';

  @IsOptional() @IsArray() @IsIn(THREAD_SELECT_FIELDS, { each: true })
  select?: ThreadSelectField[];

  @Allow()
  values?: unknown;
}

export class CountThreadsDto {
  @IsOptional() @IsObject()
  metadata?: Record<string, unknown>;

  @IsOptional() @IsIn(['idle', 'busy', 'interrupted', 'error'])
  status?: 'idle' | 'busy' | 'interrupted' | 'error';

  @Allow()
  values?: unknown;
}
