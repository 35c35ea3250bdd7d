import { Controller, Get, Inject, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { DrydockError } from '@drydock/core';
import { EXECUTIONS_REPOSITORY, toExecutionView, type ExecutionRecord, type ExecutionsRepository } from '@drydock/execution';
import { ApiErrors, VALIDATION_ERRORS } from '../openapi/api-errors.js';
import { AdminRoutes } from '../openapi/api-auth.js';
import { AdminExecutionsQueryDto } from './dto/admin-executions.dto.js';
import { AdminExecutionListResponse } from './dto/admin.response.js';

const DEFAULT_LIMIT = 100;

// Every tenant's executions for an operator, newest first, a page at a time.
@Controller('admin/executions')
@AdminRoutes('admin')
export class AdminExecutionsController {
  constructor(@Inject(EXECUTIONS_REPOSITORY) private readonly executions: ExecutionsRepository) {}

  @Get()
  @ApiOperation({ summary: "Every tenant's (or one tenant's) executions, newest first, a page at a time" })
  @ApiOkResponse({ type: AdminExecutionListResponse })
  @ApiErrors({ ...VALIDATION_ERRORS, 400: [...VALIDATION_ERRORS[400]!, 'INVALID_CURSOR'] })
  async list(@Query() query: AdminExecutionsQueryDto): Promise<AdminExecutionListResponse> {
    const limit = query.limit ?? DEFAULT_LIMIT;
    const records = await this.executions.list({
      tenantId: query.tenantId,
      status: query.status,
      from: query.from ? new Date(query.from) : undefined,
      to: query.to ? new Date(query.to) : undefined,
      before: query.before ? parseCursor(query.before) : undefined,
      limit: limit + 1,
    });
    const page = records.slice(0, limit);
    return {
      executions: page.map((r) => ({ ...toExecutionView(r), tenantId: r.tenantId })),
      next: records.length > limit ? cursorOf(page[page.length - 1]!) : null,
    };
  }
}

function cursorOf(record: ExecutionRecord): string {
  return Buffer.from(`${new Date(record.createdAt).toISOString()}|${record.id}`, 'utf8').toString('base64url');
}

function parseCursor(cursor: string): { createdAt: Date; id: string } {
  const [at, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const createdAt = new Date(at ?? '');
  if (!id || !/^exe_[0-9a-z]{20}$/.test(id) || Number.isNaN(createdAt.getTime())) {
    throw new DrydockError('INVALID_CURSOR', 'before must be the `next` value of a previous page.', 400);
  }
  return { createdAt, id };
}
