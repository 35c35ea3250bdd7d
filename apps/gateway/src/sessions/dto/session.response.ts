import { ApiProperty } from '@nestjs/swagger';
import type { EffectiveLimits } from '@drydock/execution';
import type { DatasetEntry, SessionView, StagedDataset } from '@drydock/sessions';

// The response shapes of /v1/sessions and /v1/datasets, for the OpenAPI document. Each
// implements the view the controller returns, so the compiler keeps them in step.

export class EffectiveLimitsResponse implements EffectiveLimits {
  @ApiProperty({ type: 'integer' }) memoryMb: number;
  @ApiProperty() cpus: number;
  @ApiProperty({ type: 'integer' }) timeoutMs: number;
  @ApiProperty({ type: 'integer' }) pids: number;
  @ApiProperty({ type: 'integer' }) sessionDiskMb: number;
  @ApiProperty({ type: 'integer' }) tmpDiskMb: number;
  @ApiProperty({ type: 'integer' }) maxOutputBytes: number;
}

export class SessionDatasetResponse {
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['local_ro', 'staged'] }) mode: 'local_ro' | 'staged';
}

export class NetworkPolicyResponse {
  @ApiProperty({ type: [String], example: ['pypi.org', 'files.pythonhosted.org'] }) allow: string[];
}

export class SessionResponse implements SessionView {
  @ApiProperty({ example: 'ses_01J…' }) id: string;
  @ApiProperty() threadId: string;
  @ApiProperty({ enum: ['starting', 'ready', 'lost', 'hibernated', 'ended'], description: 'hibernated: checkpointed, no container; its next execution, command or file operation resumes it.' })
  status: SessionView['status'];
  @ApiProperty() workerId: string;
  @ApiProperty({ type: () => EffectiveLimitsResponse }) limits: EffectiveLimitsResponse;
  @ApiProperty({ enum: ['tmpfs', 'bind'] }) storage: SessionView['storage'];
  @ApiProperty({ type: () => [SessionDatasetResponse] }) datasets: SessionDatasetResponse[];
  @ApiProperty({ type: 'string', nullable: true, example: 'analytics:3', description: 'The template version its sandbox starts from; null: the platform image.' })
  template: string | null;
  @ApiProperty({ type: () => NetworkPolicyResponse, nullable: true, description: 'The hosts its code may reach (docs/network.md); null: no network.' })
  network: NetworkPolicyResponse | null;
  @ApiProperty({ enum: ['runc', 'gvisor'], description: 'The isolation tier; only gvisor sessions can hibernate and be snapshotted.' })
  tier: SessionView['tier'];
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'Since when it is hibernated; null when it is not.' })
  hibernatedAt: string | null;
  @ApiProperty({ enum: ['hibernate', 'end'], nullable: true, description: "What it comes to when idle: hibernate (gvisor: after SESSION_HIBERNATE_AFTER_MS) or end; null: the deployment's SESSION_IDLE_ACTION." })
  idleAction: SessionView['idleAction'];
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) lastUsedAt: string;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'When the idle reaper ends (or hibernates) it, a hibernated one after SESSION_HIBERNATED_RETENTION_MS; null once ended.' }) expiresAt: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) endedAt: string | null;
  @ApiProperty({ type: 'string', nullable: true, example: 'idle' }) endReason: string | null;
}

export class SessionListResponse {
  @ApiProperty({ type: () => [SessionResponse] }) sessions: SessionResponse[];
}

export class DatasetEntryResponse implements DatasetEntry {
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['tenant', 'shared'] }) scope: DatasetEntry['scope'];
}

export class DatasetListResponse {
  @ApiProperty({ type: () => [DatasetEntryResponse] }) datasets: DatasetEntryResponse[];
}

export class StagedDatasetResponse implements StagedDataset {
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['staged'] }) mode: 'staged';
  @ApiProperty({ type: 'integer' }) files: number;
  @ApiProperty({ type: 'integer' }) bytes: number;
}
