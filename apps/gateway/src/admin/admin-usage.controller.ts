import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { DrydockError } from '@drydock/core';
import { AdminAuthGuard } from '../auth/admin-auth.guard.js';
import { AdminUsageQueryDto } from './dto/admin-executions.dto.js';
import { UsageRepository } from './usage.repository.js';

const DAY_MS = 86_400_000;
const DEFAULT_DAYS = 30;
const MAX_DAYS = 366;

// What tenants used, per tenant and UTC day, and what they store now.
@Controller('admin/usage')
@UseGuards(AdminAuthGuard)
export class AdminUsageController {
  constructor(private readonly usage: UsageRepository) {}

  @Get()
  async get(@Query() query: AdminUsageQueryDto) {
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
