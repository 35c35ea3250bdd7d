import { Controller, Get, Inject, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { DrydockError } from '@drydock/core';
import { EGRESS_LOG_REPOSITORY, type EgressLogRepository } from '@drydock/egress';
import { ApiErrors, VALIDATION_ERRORS } from '../openapi/api-errors.js';
import { AdminRoutes } from '../openapi/api-auth.js';
import { AdminEgressQueryDto, AdminEgressResponse, toConnectionView } from './egress.views.js';

// Every tenant's connection attempts through the egress proxy, for operators.
@Controller('admin/egress')
@AdminRoutes('admin')
export class AdminEgressController {
  constructor(@Inject(EGRESS_LOG_REPOSITORY) private readonly log: EgressLogRepository) {}

  @Get()
  @ApiOperation({ summary: 'Connection attempts through the egress proxy, across tenants (newest first)' })
  @ApiOkResponse({ type: AdminEgressResponse })
  @ApiErrors({ ...VALIDATION_ERRORS, 400: [...VALIDATION_ERRORS[400]!, 'INVALID_RANGE'] })
  async list(@Query() query: AdminEgressQueryDto): Promise<AdminEgressResponse> {
    const from = query.from ? new Date(query.from) : undefined;
    const to = query.to ? new Date(query.to) : undefined;
    if (from && to && from >= to) throw new DrydockError('INVALID_RANGE', 'from must be before to.', 400);
    const limit = query.limit ?? 100;
    const rows = await this.log.list({ tenantId: query.tenantId, sessionId: query.sessionId, batchId: query.batchId, verdict: query.verdict, from, to, before: query.before, limit });
    return {
      connections: rows.map((r) => ({ ...toConnectionView(r), tenantId: r.tenantId, workerId: r.workerId })),
      next: rows.length === limit ? rows[rows.length - 1]!.id : null,
    };
  }
}
