import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import type { BatchItemInput, BatchOptions } from '@drydock/batches';
import { NetworkOption } from '../../http/network-option.js';

export const ITEM_STATUSES = ['queued', 'running', 'ok', 'error', 'timeout', 'memory', 'killed', 'cancelled'] as const;

const BATCH_ID = /^bat_[A-Za-z0-9_-]{1,64}$/;

export class ListBatchesQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 500, default: 50 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(500)
  limit?: number;

  // The id of the last batch of the previous page (the answer's `next`).
  @ApiPropertyOptional({ pattern: BATCH_ID.source, description: "The previous page's `next` (the id of its last batch)." })
  @IsOptional() @IsString() @Matches(BATCH_ID, { message: 'before must be a batch id' })
  before?: string;
}

export class ListItemsQueryDto {
  @ApiPropertyOptional({ enum: ITEM_STATUSES, description: 'Only the items with this status.' })
  @IsOptional() @IsIn(ITEM_STATUSES, { message: `status must be one of ${ITEM_STATUSES.join(', ')}` })
  status?: (typeof ITEM_STATUSES)[number];

  @ApiPropertyOptional({ type: 'integer', minimum: 0, default: 0, description: 'Items to skip (in index order).' })
  @IsOptional() @Type(() => Number) @IsInt() @Min(0)
  offset?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 1000, default: 100 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000)
  limit?: number;
}

export class CancelBatchDto {
  // Also stop the items running now (they end `killed`); otherwise they finish.
  @ApiPropertyOptional({ default: false, description: 'Also stop the items running now (they end `killed`); otherwise they finish.' })
  @IsOptional() @IsBoolean()
  kill?: boolean;
}

// The JSON body of POST /v1/batches, for the OpenAPI document only: the route reads the
// body itself (JSON or NDJSON) and checks it with libs/batches/src/batch-input.ts, not
// with the ValidationPipe. Unknown fields are refused there.

export class BatchItemDto implements BatchItemInput {
  @ApiProperty({ description: 'Python to run (at most BATCH_MAX_CODE_BYTES bytes).', example: 'print(1)' })
  code: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { '/data/in.csv': 'a,b\n1,2\n' },
    description:
      'Text files put in /session before the code runs, {"/path": "text"}: at most BATCH_MAX_ITEM_FILES files and ' +
      'BATCH_MAX_ITEM_FILE_BYTES bytes; paths follow the thread-file rules and may not be in /artifacts/.',
  })
  files?: Record<string, string>;

  @ApiPropertyOptional({ minLength: 1, maxLength: 200, description: "The client's own id for the item, returned with it." })
  id?: string;
}

export class BatchLimitsDto implements NonNullable<BatchOptions['limits']> {
  @ApiPropertyOptional({ type: 'integer', minimum: 32, maximum: 1_048_576, description: "Memory in MiB (clamped to the tenant's maximum)." })
  memoryMb?: number;

  @ApiPropertyOptional({ minimum: 0.05, maximum: 256, description: "CPUs (clamped to the tenant's maximum)." })
  cpus?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 100, maximum: 86_400_000, description: "Time limit of an item in ms (clamped to the tenant's maximum)." })
  timeoutMs?: number;
}

// The options, as in the JSON body or on the first line of an NDJSON body.
export class BatchOptionsDto implements BatchOptions {
  @ApiPropertyOptional({ type: () => BatchLimitsDto, description: "Every item's sandbox limits, clamped like a session's." })
  limits?: BatchLimitsDto;

  @ApiPropertyOptional({ type: 'integer', minimum: 100, maximum: 86_400_000, description: "Each item's time limit in ms, at most the limits' timeoutMs." })
  timeoutMs?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 10_000,
    description: "Items of this batch running at once; default BATCH_DEFAULT_CONCURRENCY, at most the tenant's batchConcurrency.",
  })
  concurrency?: number;

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 200,
    description: 'Unique per tenant: a batch submitted again with a used key is not recorded again; the first one is answered (200).',
  })
  idempotencyKey?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Anything, at most 16 KiB of JSON; returned as given.' })
  metadata?: Record<string, unknown>;

  @ApiPropertyOptional({ maxLength: 80, example: 'analytics', description: 'A template ("name" or "name:version", resolved at submission) every item starts from. 404 TEMPLATE_NOT_FOUND, 409 TEMPLATE_NOT_READY.' })
  template?: string;

  @NetworkOption(
    'The hosts every item\'s code may reach through the platform\'s egress proxy, within the tenant\'s ceiling (docs/network.md), fixed at submission: ' +
      '{"allow": ["pypi.org", "*.example.com"]}. false or absent: no network. 403 NETWORK_FORBIDDEN for true, 422 NETWORK_NOT_ALLOWED names entries ' +
      'outside the ceiling, 400 INVALID_NETWORK_POLICY a malformed one.',
  )
  network?: unknown;
}

export class SubmitBatchDto extends BatchOptionsDto {
  @ApiProperty({ type: () => [BatchItemDto], minItems: 1, description: 'At most BATCH_MAX_ITEMS (100,000 by default).' })
  items: BatchItemDto[];
}
