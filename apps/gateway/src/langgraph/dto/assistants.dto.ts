import { ApiPropertyOptional } from '@nestjs/swagger';
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

const ASSISTANT_SORT_FIELDS = ['assistant_id', 'graph_id', 'name', 'created_at', 'updated_at'] as const;

export class SearchAssistantsDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 128, example: 'agent', description: 'Only assistants of this graph (every assistant here is "agent").' })
  @IsOptional() @IsString() @Length(1, 128)
  graph_id?: string;

  // Case-insensitive substring of the name.
  @ApiPropertyOptional({ minLength: 1, maxLength: 256, description: 'A case-insensitive substring of the name.' })
  @IsOptional() @IsString() @Length(1, 256)
  name?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Only assistants whose metadata has every key/value given.' })
  @IsOptional() @IsObject()
  metadata?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 1000, default: 10 })
  @IsOptional() @IsInt() @Min(1) @Max(1000)
  limit?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, default: 0 })
  @IsOptional() @IsInt() @Min(0)
  offset?: number;

  @ApiPropertyOptional({ enum: ASSISTANT_SORT_FIELDS, default: 'created_at' })
  @IsOptional() @IsIn(['assistant_id', 'graph_id', 'name', 'created_at', 'updated_at'])
  sort_by?: 'assistant_id' | 'graph_id' | 'name' | 'created_at' | 'updated_at';

  @ApiPropertyOptional({ enum: ['asc', 'desc'], description: 'Default: desc without sort_by (newest first), asc with it.' })
  @IsOptional() @IsIn(['asc', 'desc'])
  sort_order?: 'asc' | 'desc';

  @ApiPropertyOptional({ type: 'array', items: { type: 'string', enum: [...ASSISTANT_SELECT_FIELDS] }, description: 'Only these fields of each assistant (default: all).' })
  @IsOptional() @IsArray() @IsIn(ASSISTANT_SELECT_FIELDS, { each: true })
  select?: AssistantSelectField[];
}

export class CountAssistantsDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 128, example: 'agent', description: 'Only assistants of this graph (every assistant here is "agent").' })
  @IsOptional() @IsString() @Length(1, 128)
  graph_id?: string;

  @ApiPropertyOptional({ minLength: 1, maxLength: 256, description: 'A case-insensitive substring of the name.' })
  @IsOptional() @IsString() @Length(1, 256)
  name?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Only assistants whose metadata has every key/value given.' })
  @IsOptional() @IsObject()
  metadata?: Record<string, unknown>;
}
