import { ApiProperty, ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import type { HealthCheckResult, HealthIndicatorResult } from '@nestjs/terminus';

// The answers of /health, /health/live and /health/ready, for the OpenAPI document.

// One Terminus indicator's entry: `status`, and what it adds (`message` when a check
// failed; `live` and `reachDocker` for workers).
const INDICATOR_KEYS =
  'By indicator: `database` and `redis` (`{status}`, with `message` when down), `workers` (`{status, live, reachDocker}`: ' +
  'live workers and the active ones that reach Docker, or `message` when they could not be listed). /health/live checks nothing: `{}`.';

const INDICATORS: ApiPropertyOptions = {
  type: 'object',
  additionalProperties: {
    type: 'object',
    required: ['status'],
    properties: { status: { type: 'string', enum: ['up', 'down'] } },
    additionalProperties: true,
  },
  description: INDICATOR_KEYS,
};

export class HealthCheckResponse implements HealthCheckResult {
  @ApiProperty({ enum: ['ok'] }) status: HealthCheckResult['status'];
  @ApiProperty({ ...INDICATORS, description: `The indicators that are up. ${INDICATOR_KEYS}`, example: { database: { status: 'up' }, redis: { status: 'up' }, workers: { status: 'up', live: 2, reachDocker: 2 } } })
  info: HealthIndicatorResult;
  @ApiProperty({ ...INDICATORS, description: 'The indicators that are down: none.', example: {} }) error: HealthIndicatorResult;
  @ApiProperty({ ...INDICATORS, description: 'Every indicator, up or down.', example: { database: { status: 'up' }, redis: { status: 'up' }, workers: { status: 'up', live: 2, reachDocker: 2 } } })
  details: HealthIndicatorResult;
}

export class HealthCheckFailedResponse implements HealthCheckResult {
  @ApiProperty({ enum: ['error', 'shutting_down'], description: 'shutting_down while this gateway stops.' }) status: HealthCheckResult['status'];
  @ApiProperty({ ...INDICATORS, description: `The indicators that are up. ${INDICATOR_KEYS}`, example: { database: { status: 'up' }, redis: { status: 'up' } } })
  info: HealthIndicatorResult;
  @ApiProperty({ ...INDICATORS, description: `The indicators that are down. ${INDICATOR_KEYS}`, example: { workers: { status: 'down', live: 1, reachDocker: 0 } } })
  error: HealthIndicatorResult;
  @ApiProperty({ ...INDICATORS, description: 'Every indicator, up or down.', example: { database: { status: 'up' }, redis: { status: 'up' }, workers: { status: 'down', live: 1, reachDocker: 0 } } })
  details: HealthIndicatorResult;
}

export class PlatformCheckResponse {
  @ApiProperty({ enum: ['up', 'down'] }) status: 'up' | 'down';
  @ApiPropertyOptional({ description: 'Why it is down, or for docker how many workers reach it.', example: '2 of 2 workers reach Docker' }) detail?: string;
}

export class PlatformChecksResponse {
  @ApiProperty({ type: () => PlatformCheckResponse, description: 'PostgreSQL answers.' }) database: PlatformCheckResponse;
  @ApiProperty({ type: () => PlatformCheckResponse, description: 'Redis answers.' }) redis: PlatformCheckResponse;
  @ApiProperty({ type: () => PlatformCheckResponse, description: 'At least one live worker reaches Docker.' }) docker: PlatformCheckResponse;
}

export class PlatformHealthResponse {
  @ApiProperty({ enum: ['ok', 'degraded'], description: 'ok (200) when every check is up, else degraded (503).' }) status: 'ok' | 'degraded';
  @ApiProperty({ type: () => PlatformChecksResponse }) checks: PlatformChecksResponse;
}
