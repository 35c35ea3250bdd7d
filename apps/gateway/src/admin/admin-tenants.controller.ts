import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, UseGuards } from '@nestjs/common';
import { TenantsService, type TenantRecord } from '@drydock/core';
import { AdminAuthGuard } from '../auth/admin-auth.guard.js';
import { CreateTenantDto, UpdateTenantDto } from './dto/tenant.dto.js';
import { TenantLifecycleService } from './tenant-lifecycle.service.js';

const view = (t: TenantRecord) => ({
  id: t.id,
  name: t.name,
  limits: t.limits,
  createdAt: new Date(t.createdAt).toISOString(),
  updatedAt: new Date(t.updatedAt).toISOString(),
  suspendedAt: t.suspendedAt ? new Date(t.suspendedAt).toISOString() : null,
});

@Controller('admin/tenants')
@UseGuards(AdminAuthGuard)
export class AdminTenantsController {
  constructor(
    private readonly tenants: TenantsService,
    private readonly lifecycle: TenantLifecycleService,
  ) {}

  // The API key is returned once; only its hash is stored.
  @Post()
  async create(@Body() dto: CreateTenantDto) {
    const { tenant, apiKey } = await this.tenants.create(dto.name, dto.limits ?? {});
    return { ...view(tenant), apiKey };
  }

  @Get()
  async list() {
    return { tenants: (await this.tenants.list()).map(view) };
  }

  @Get(':id')
  async get(@Param('id') id: string) {
    return view(await this.tenants.get(id));
  }

  @Patch(':id')
  async update(@Param('id') id: string, @Body() dto: UpdateTenantDto) {
    return view(await this.tenants.updateLimits(id, dto.limits));
  }

  // Issues a new key and revokes every previous one.
  @Post(':id/keys')
  @HttpCode(201)
  async rotate(@Param('id') id: string) {
    const { tenant, apiKey } = await this.tenants.rotateKey(id);
    return { ...view(tenant), apiKey };
  }

  // Its keys answer 403 TENANT_SUSPENDED, its sessions end, its batch items wait.
  @Post(':id/suspend')
  @HttpCode(200)
  async suspend(@Param('id') id: string) {
    return view(await this.lifecycle.suspend(id));
  }

  @Post(':id/resume')
  @HttpCode(200)
  async resume(@Param('id') id: string) {
    return view(await this.lifecycle.resume(id));
  }

  // Removes everything the tenant owns; what was removed besides rows, counted.
  @Delete(':id')
  @HttpCode(200)
  async delete(@Param('id') id: string) {
    await this.tenants.get(id);
    return { id, deleted: true, ...(await this.lifecycle.delete(id)) };
  }
}
