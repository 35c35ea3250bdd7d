import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { ExecutionView } from '@drydock/execution';
import type { SessionView, WorkerInfo, WorkerState } from '@drydock/sessions';
import { ExecutionResponse } from '../../executions/dto/execution.response.js';
import { SessionResponse } from '../../sessions/dto/session.response.js';
import type { TenantRemoval } from '../tenant-lifecycle.service.js';
import type { DailyUsage, StoredUsage } from '../usage.repository.js';
import { TenantLimitsDto } from './tenant.dto.js';

// The response shapes of the /admin routes, for the OpenAPI document. The controllers'
// handlers are typed with them (or they implement the library's view), so the compiler
// keeps the two in step.

export class TenantResponse {
  @ApiProperty({ example: 'ten_01j9z3k4m5n6p7q8r9s0' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: () => TenantLimitsDto, description: 'The limits set for the tenant; an absent key falls back to the platform default.' })
  limits: TenantLimitsDto;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'When an operator suspended it; null while it is active.' })
  suspendedAt: string | null;
}

export class TenantWithKeyResponse extends TenantResponse {
  @ApiProperty({ example: 'ddk_…', description: 'The new API key. Shown once: only its hash is stored.' }) apiKey: string;
}

export class TenantListResponse {
  @ApiProperty({ type: () => [TenantResponse] }) tenants: TenantResponse[];
}

export class TenantDeletedResponse implements TenantRemoval {
  @ApiProperty() id: string;
  @ApiProperty({ example: true, description: 'Always true.' }) deleted: boolean;
  @ApiProperty({ type: 'integer', description: 'Live sessions ended (their containers removed).' }) sessionsEnded: number;
  @ApiProperty({ type: 'integer', description: 'Queued or running batches cancelled (running items killed).' }) batchesCancelled: number;
  @ApiProperty({ type: 'integer', description: "The agent's checkpoints deleted." }) checkpointsDeleted: number;
  @ApiProperty({ type: 'integer', description: 'Artifact blobs no other tenant referenced, removed.' }) blobsRemoved: number;
}

export class TemplatePoolResponse {
  @ApiProperty({ example: 'analytics:3', description: "The template's newest ready version, which the pool starts." }) template: string;
  @ApiProperty({ type: 'integer', description: 'Its poolSize (PATCH /admin/templates/:name).' }) size: number;
  @ApiProperty({ type: 'integer' }) ready: number;
  @ApiProperty({ type: 'integer' }) starting: number;
}

export class WorkerPoolResponse {
  @ApiProperty({ type: 'integer', description: 'WORKER_POOL_SIZE.' }) size: number;
  @ApiProperty({ type: 'integer', description: 'Started sandboxes waiting for a session.' }) ready: number;
  @ApiProperty({ type: 'integer' }) starting: number;
  @ApiPropertyOptional({ type: () => [TemplatePoolResponse], description: 'The pools of templates operators gave a pool size; absent when none.' })
  templates?: TemplatePoolResponse[];
}

export class WorkerResponse implements WorkerInfo {
  @ApiProperty() id: string;
  @ApiPropertyOptional({
    enum: ['active', 'draining', 'drained'],
    description: 'Only active workers get new sessions; absent (active) from workers older than drains.',
  })
  state?: WorkerState;
  @ApiProperty() hostname: string;
  @ApiProperty({ type: 'integer', description: 'Sessions it may hold.' }) capacity: number;
  @ApiProperty({ type: 'integer', description: 'Sessions it holds.' }) sessions: number;
  @ApiProperty({ format: 'date-time' }) startedAt: string;
  @ApiProperty({ format: 'date-time', description: 'Its last heartbeat.' }) lastSeenAt: string;
  @ApiProperty({ description: 'It reaches its Docker daemon.' }) dockerHealthy: boolean;
  @ApiPropertyOptional({ type: () => WorkerPoolResponse, description: 'The warm pool of started sandboxes.' }) pool?: WorkerPoolResponse;
}

export class WorkerListResponse {
  @ApiProperty({ type: () => [WorkerResponse] }) workers: WorkerResponse[];
}

export class DrainingWorkerResponse extends WorkerResponse {
  @ApiProperty({ example: true, description: 'Always true: the worker sees the request with its next heartbeat.' }) drainRequested: boolean;
}

export class QueueJobCountsResponse {
  @ApiProperty({ type: 'integer' }) waiting: number;
  @ApiProperty({ type: 'integer' }) active: number;
  @ApiProperty({ type: 'integer' }) completed: number;
  @ApiProperty({ type: 'integer' }) failed: number;
  @ApiProperty({ type: 'integer' }) delayed: number;
}

export class WorkerQueueResponse {
  @ApiProperty() workerId: string;
  @ApiProperty({ description: "The worker's session queue (BullMQ)." }) queue: string;
  // BullMQ types the counts as a string-keyed record; these are the states asked for.
  @ApiProperty({ type: () => QueueJobCountsResponse }) counts: Record<string, number>;
}

export class QueueListResponse {
  @ApiProperty({ type: () => [WorkerQueueResponse] }) queues: WorkerQueueResponse[];
}

export class AdminSessionResponse extends SessionResponse implements SessionView {
  @ApiProperty() tenantId: string;
  @ApiProperty({ type: 'string', nullable: true, description: "The Docker container on its worker's host (use it, not a warm-pool sandbox's labels); null before it has one." })
  containerId: string | null;
}

export class AdminSessionListResponse {
  @ApiProperty({ type: () => [AdminSessionResponse], description: 'At most 1,000.' }) sessions: AdminSessionResponse[];
}

export class AdminExecutionResponse extends ExecutionResponse implements ExecutionView {
  @ApiProperty() tenantId: string;
}

export class AdminExecutionListResponse {
  @ApiProperty({ type: () => [AdminExecutionResponse], description: 'Newest first.' }) executions: AdminExecutionResponse[];
  @ApiProperty({ type: 'string', nullable: true, description: 'Pass as `before` for the next page; null on the last.' }) next: string | null;
}

export class UsageTotalsResponse {
  @ApiProperty({ type: 'integer' }) count: number;
  @ApiProperty({ description: "CPU seconds from the sandboxes' cgroup counters while the code ran." }) cpuSeconds: number;
  @ApiProperty({ description: 'Seconds the runs took.' }) wallSeconds: number;
}

export class EgressUsageResponse {
  @ApiProperty({ type: 'integer', description: 'From hosts to sandboxes.' }) bytesIn: number;
  @ApiProperty({ type: 'integer', description: 'From sandboxes to hosts.' }) bytesOut: number;
}

export class DailyUsageResponse implements DailyUsage {
  @ApiProperty() tenantId: string;
  @ApiProperty({ format: 'date', example: '2025-01-31', description: 'UTC day.' }) day: string;
  @ApiProperty({ type: () => UsageTotalsResponse, description: 'Executions created that day.' }) executions: UsageTotalsResponse;
  @ApiProperty({ type: () => UsageTotalsResponse, description: 'Batch items finished that day (cancelled ones excluded).' }) batchItems: UsageTotalsResponse;
  @ApiProperty({ type: () => EgressUsageResponse, description: 'Bytes through the egress proxy by connections started that day.' }) egress: EgressUsageResponse;
}

export class StoredUsageResponse implements StoredUsage {
  @ApiProperty() tenantId: string;
  @ApiProperty({ type: 'integer' }) threadFileBytes: number;
  @ApiProperty({ type: 'integer' }) artifactBytes: number;
  @ApiProperty({ type: 'integer' }) artifactCount: number;
}

export class UsageResponse {
  @ApiProperty({ format: 'date-time' }) from: string;
  @ApiProperty({ format: 'date-time' }) to: string;
  @ApiProperty({ type: () => [DailyUsageResponse], description: 'Per tenant and UTC day.' }) days: DailyUsageResponse[];
  @ApiProperty({ type: () => [StoredUsageResponse], description: 'What each tenant stores now (not per day).' }) stored: StoredUsageResponse[];
}
