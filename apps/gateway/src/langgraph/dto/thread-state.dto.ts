import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, IsBoolean, IsInt, IsObject, IsOptional, IsString, Length, Max, Min } from 'class-validator';

const CHECKPOINT_REF = {
  type: 'object',
  properties: { checkpoint_id: { type: 'string', format: 'uuid' } },
  additionalProperties: true,
} as const;

// POST /threads/:id/state: a state update, as if `as_node` had returned `values`.
export class UpdateThreadStateDto {
  // An object of state keys (messages in LangChain dict form); checked in the service.
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'State keys to apply, e.g. {"messages": [{"role": "user", "content": "..."}]} (LangChain message dicts); anything but an object is 400 INVALID_STATE_UPDATE.',
  })
  @Allow()
  values?: unknown;

  @ApiPropertyOptional({ minLength: 1, maxLength: 128, description: 'The node the update is applied as (an unknown node is 400 INVALID_STATE_UPDATE).' })
  @IsOptional() @IsString() @Length(1, 128)
  as_node?: string;

  @ApiPropertyOptional({ format: 'uuid', minLength: 1, maxLength: 128, description: 'Update from this checkpoint (a branch) instead of the latest.' })
  @IsOptional() @IsString() @Length(1, 128)
  checkpoint_id?: string;

  @ApiPropertyOptional({ ...CHECKPOINT_REF, description: '{checkpoint_id}: the same as checkpoint_id.' })
  @IsOptional() @IsObject()
  checkpoint?: Record<string, unknown>;
}

// POST /threads/:id/state/checkpoint
export class StateAtCheckpointDto {
  @ApiProperty({ ...CHECKPOINT_REF, description: '{checkpoint_id}; without one, the latest state.' })
  @IsObject()
  checkpoint: Record<string, unknown>;

  @ApiPropertyOptional({ description: 'Not supported: true is refused with 400 UNSUPPORTED_OPTION.', default: false })
  @IsOptional() @IsBoolean()
  subgraphs?: boolean;
}

// POST /threads/:id/history
export class ThreadHistoryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 1000, default: 10 })
  @IsOptional() @IsInt() @Min(1) @Max(1000)
  limit?: number;

  // A checkpoint id, or a config {configurable: {checkpoint_id}}: states before it.
  @ApiPropertyOptional({
    oneOf: [
      { type: 'string', format: 'uuid' },
      { type: 'object', properties: { configurable: CHECKPOINT_REF }, additionalProperties: true },
    ],
    description: 'Only states before this checkpoint: its id, or a config {configurable: {checkpoint_id}}.',
  })
  @Allow()
  before?: unknown;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Not supported: a non-empty object is refused with 400 UNSUPPORTED_OPTION.' })
  @IsOptional() @IsObject()
  metadata?: Record<string, unknown>;

  // Where to start: {checkpoint_id}.
  @ApiPropertyOptional({ ...CHECKPOINT_REF, description: 'Start from this checkpoint {checkpoint_id} (default: the latest).' })
  @IsOptional() @IsObject()
  checkpoint?: Record<string, unknown>;
}
