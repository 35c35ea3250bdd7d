import { IsArray, IsIn, IsInt, IsObject, IsOptional, IsString, Length, Max, Min } from 'class-validator';

export const ASSISTANT_SELECT_FIELDS = [
  'assistant_id',
  'graph_id',
  'name',
  'description',
  'config',
  'context',
  'created_at',
  'updated_at',
  'metadata',
  'version',
] as const;
export type AssistantSelectField = (typeof ASSISTANT_SELECT_FIELDS)[number];

export class SearchAssistantsDto {
  @IsOptional() @IsString() @Length(1, 128)
  graph_id?: string;

  // Case-insensitive substring of the name.
  @IsOptional() @IsString() @Length(1, 256)
  name?: string;

  @IsOptional() @IsObject()
  metadata?: Record<string, unknown>;

  @IsOptional() @IsInt() @Min(1) @Max(1000)
  limit?: number;

  @IsOptional() @IsInt() @Min(0)
  offset?: number;

  @IsOptional() @IsIn(['assistant_id', 'graph_id', 'name', 'created_at', 'updated_at'])
  sort_by?: 'assistant_id' | 'graph_id' | 'name' | 'created_at' | 'updated_at';

  @IsOptional() @IsIn(['asc', 'desc'])
  sort_order?: 'asc' | 'desc';

  @IsOptional() @IsArray() @IsIn(ASSISTANT_SELECT_FIELDS, { each: true })
  select?: AssistantSelectField[];
}

export class CountAssistantsDto {
  @IsOptional() @IsString() @Length(1, 128)
  graph_id?: string;

  @IsOptional() @IsString() @Length(1, 256)
  name?: string;

  @IsOptional() @IsObject()
  metadata?: Record<string, unknown>;
}
