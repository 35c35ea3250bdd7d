import { ApiProperty } from '@nestjs/swagger';
import type { BatchCounts, BatchItemView, BatchView, SubmittedBatch } from '@drydock/batches';
import { ExecutionFilesResponse, PythonErrorResponse, RichResultResponse } from '../../executions/dto/execution.response.js';
import { EffectiveLimitsResponse, NetworkPolicyResponse } from '../../sessions/dto/session.response.js';

// The response shapes of /v1/batches (docs/api.md "Batches"), for the OpenAPI document.
// Each implements the view the routes return, so the compiler keeps them in step.

const BATCH_STATUSES = ['queued', 'running', 'completed', 'cancelling', 'cancelled'];
const ITEM_VIEW_STATUSES = ['queued', 'running', 'ok', 'error', 'timeout', 'memory', 'killed', 'cancelled'];

export class SubmittedBatchResponse implements SubmittedBatch {
  @ApiProperty({ example: 'bat_01J…' }) id: string;
  @ApiProperty({ enum: BATCH_STATUSES, description: "queued for a new batch; for a repeated idempotencyKey, the existing batch's status now." })
  status: SubmittedBatch['status'];
  @ApiProperty({ type: 'integer', description: 'Items in the batch.' }) total: number;
}

export class BatchCountsResponse implements BatchCounts {
  @ApiProperty({ type: 'integer' }) queued: number;
  @ApiProperty({ type: 'integer' }) running: number;
  @ApiProperty({ type: 'integer' }) ok: number;
  @ApiProperty({ type: 'integer' }) error: number;
  @ApiProperty({ type: 'integer' }) timeout: number;
  @ApiProperty({ type: 'integer' }) memory: number;
  @ApiProperty({ type: 'integer' }) killed: number;
  @ApiProperty({ type: 'integer' }) cancelled: number;
}

export class BatchResponse implements BatchView {
  @ApiProperty({ example: 'bat_01J…' }) id: string;
  @ApiProperty({
    enum: BATCH_STATUSES,
    description:
      'completed once every item has ended. After a cancel: cancelling while items it had started still run (they end as they ' +
      'would, or killed with kill: true), then cancelled. Only completed and cancelled are final; nothing changes after them.',
  })
  status: BatchView['status'];
  @ApiProperty({ type: 'integer' }) total: number;
  @ApiProperty({ type: () => BatchCountsResponse, description: 'Items by status.' }) counts: BatchCountsResponse;
  @ApiProperty({ type: 'integer', description: 'Items of this batch running at once.' }) concurrency: number;
  @ApiProperty({ type: 'integer', description: "Each item's time limit (ms)." }) timeoutMs: number;
  @ApiProperty({ type: () => EffectiveLimitsResponse, description: 'The sandbox limits every item runs with.' }) limits: EffectiveLimitsResponse;
  @ApiProperty({ type: 'string', nullable: true, example: 'analytics:3', description: 'The template version every item starts from; null: the platform image.' }) template: string | null;
  @ApiProperty({ type: () => NetworkPolicyResponse, nullable: true, description: 'The hosts every item\'s code may reach (docs/network.md); null: no network.' })
  network: NetworkPolicyResponse | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) startedAt: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) finishedAt: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, description: 'As submitted.' }) metadata: Record<string, unknown> | null;
}

export class BatchListResponse {
  @ApiProperty({ type: () => [BatchResponse], description: 'Newest first.' }) batches: BatchResponse[];
  @ApiProperty({ type: 'string', nullable: true, description: 'Pass as `before` for the next page; null on the last.' }) next: string | null;
}

export class BatchItemResponse implements BatchItemView {
  @ApiProperty({ type: 'integer', description: 'Position in the submitted batch, from 0.' }) index: number;
  @ApiProperty({ type: 'string', nullable: true, description: "The client's own id for the item, if it gave one." }) id: string | null;
  @ApiProperty({ enum: ITEM_VIEW_STATUSES }) status: BatchItemView['status'];
  @ApiProperty({ type: 'integer', description: 'Above 1 when a worker running it was lost and another ran it again.' }) attempts: number;
  @ApiProperty({ type: 'string', nullable: true }) stdout: string | null;
  @ApiProperty({ type: 'string', nullable: true }) stderr: string | null;
  @ApiProperty({ type: 'boolean', nullable: true, description: 'Output was cut at maxOutputBytes.' }) truncated: boolean | null;
  @ApiProperty({ type: () => RichResultResponse, nullable: true }) result: BatchItemView['result'];
  @ApiProperty({ type: () => PythonErrorResponse, nullable: true }) error: BatchItemView['error'];
  @ApiProperty({ type: () => ExecutionFilesResponse, nullable: true, description: 'What the code changed under /session (not kept: an item has no thread).' })
  files: BatchItemView['files'];
  @ApiProperty({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    description: 'Artifact descriptors of what it left in /session/artifacts/ (with batchId and batchItem).',
  })
  artifacts: unknown[];
  @ApiProperty({ type: 'integer', nullable: true }) durationMs: number | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) startedAt: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) finishedAt: string | null;
}

export class BatchItemListResponse {
  @ApiProperty({ type: () => [BatchItemResponse], description: 'In index order.' }) items: BatchItemResponse[];
}
