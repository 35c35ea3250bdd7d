import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { DrydockError } from '@drydock/core';
import { ApiErrors, VALIDATION_ERRORS } from '../openapi/api-errors.js';
import { AdminRoutes } from '../openapi/api-auth.js';
import { AdminUsageQueryDto } from './dto/admin-executions.dto.js';
import { UsageResponse } from './dto/admin.response.js';
import { UsageRepository } from './usage.repository.js';

const DAY_MS = 86_400_000;
const DEFAULT_DAYS = 30;
const MAX_DAYS = 366;

// What tenants used, per tenant and UTC day, and what they store now.
@Controller('admin/usage')
@AdminRoutes('admin')
export class AdminUsageController {
  constructor(private readonly usage: UsageRepository) {}

  @Get()
  @ApiOperation({ summary: 'What tenants used per UTC day (executions, batch items) and what they store now' })
  @ApiOkResponse({ type: UsageResponse })
  @ApiErrors({ ...VALIDATION_ERRORS, 400: [...VALIDATION_ERRORS[400]!, 'INVALID_RANGE'] })
  async get(@Query() query: AdminUsageQueryDto): Promise<UsageResponse> {
    const to = query.to ? new Date(query.to) : new Date();
    const from = query.from ? new Date(query.from) : new Date(to.getTime() - DEFAULT_DAYS * DAY_MS);
    if (from >= to) throw new DrydockError('INVALID_RANGE', 'from must be before to.', 400);
    if (to.getTime() - from.getTime() > MAX_DAYS * DAY_MS) {
      throw new DrydockError('INVALID_RANGE', `The range may span at most ${MAX_DAYS} days.`, 400);
    }
    const tenantId = query.tenantId ?? null;
    const [days, stored] = await Promise.all([this.usage.daily(from, to, tenantId), this.usage.stored(tenantId)]);
    return { from: from.toISOString(), to: to.toISOString(), days, stored };
  }
}
