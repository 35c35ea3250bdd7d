import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { ArtifactDescriptor } from '@drydock/artifacts';

// The response shapes of /v1/artifacts (API.md "Artifacts"), for the OpenAPI document.

export class ArtifactResponse implements ArtifactDescriptor {
  @ApiProperty({ example: 'art_01J…' }) id: string;
  @ApiProperty({ example: 'plot.png' }) name: string;
  @ApiProperty({ example: '/session/artifacts/plot.png' }) path: string;
  @ApiProperty({ type: 'integer' }) size: number;
  @ApiProperty({ example: 'image/png' }) mime: string;
  @ApiProperty() sha256: string;
  @ApiProperty({ type: 'string', nullable: true }) threadId: string | null;
  @ApiProperty({ type: 'string', nullable: true }) sessionId: string | null;
  @ApiProperty({ type: 'string', nullable: true }) executionId: string | null;
  @ApiPropertyOptional({ description: 'Set for what a batch item produced.' }) batchId?: string;
  @ApiPropertyOptional({ type: 'integer', description: "The batch item's index." }) batchItem?: number;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'When retention deletes it; null when kept until deleted.' }) expiresAt: string | null;
  @ApiProperty({ description: 'The download route (needs the tenant key); POST …/url gives a signed link.' }) url: string;
}

export class ArtifactListResponse {
  @ApiProperty({ type: () => [ArtifactResponse] }) artifacts: ArtifactResponse[];
}

export class SignedUrlResponse {
  @ApiProperty({ description: 'A link that downloads the artifact without an API key until expiresAt.' }) url: string;
  @ApiProperty({ format: 'date-time' }) expiresAt: string;
}
