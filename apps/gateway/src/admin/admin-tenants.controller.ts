import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { TenantsService, type TenantLimits, type TenantRecord } from '@drydock/core';
import { normalizeCeiling } from '@drydock/egress';
import { ApiErrors, VALIDATION_ERRORS } from '../openapi/api-errors.js';
import { AdminRoutes } from '../openapi/api-auth.js';
import {
  TenantDeletedResponse,
  TenantListResponse,
  TenantResponse,
  TenantWithKeyResponse,
} from './dto/admin.response.js';
import { CreateTenantDto, UpdateTenantDto } from './dto/tenant.dto.js';
import { TenantLifecycleService } from './tenant-lifecycle.service.js';

const view = (t: TenantRecord): TenantResponse => ({
  id: t.id,
  name: t.name,
  limits: t.limits,
  createdAt: new Date(t.createdAt).toISOString(),
  updatedAt: new Date(t.updatedAt).toISOString(),
  suspendedAt: t.suspendedAt ? new Date(t.suspendedAt).toISOString() : null,
});

// Limits as stored: the network ceiling normalized (400 INVALID_NETWORK_POLICY naming each
// bad entry); `network: null` removes it (the merge then drops the key). Only the limits
// sent: the validated DTO is a class instance with every field, the ones not sent
// undefined, which spread over the stored limits would erase them (a PATCH of one limit
// dropped every other).
function checkedLimits(dto: TenantLimits & { network?: TenantLimits['network'] | null }): TenantLimits {
  const limits = Object.fromEntries(Object.entries(dto).filter(([, value]) => value !== undefined)) as typeof dto;
  if (limits.network === undefined) return limits;
  return { ...limits, network: limits.network === null ? undefined : normalizeCeiling(limits.network) };
}

@Controller('admin/tenants')
@AdminRoutes('admin')
export class AdminTenantsController {
  constructor(
    private readonly tenants: TenantsService,
    private readonly lifecycle: TenantLifecycleService,
  ) {}

  // The API key is returned once; only its hash is stored.
  @Post()
  @ApiOperation({ summary: 'Create a tenant and its first API key (shown once)' })
  @ApiCreatedResponse({ type: TenantWithKeyResponse })
  @ApiErrors({ ...VALIDATION_ERRORS, 400: [...VALIDATION_ERRORS[400]!, 'INVALID_NETWORK_POLICY'] })
  async create(@Body() dto: CreateTenantDto): Promise<TenantWithKeyResponse> {
    const { tenant, apiKey } = await this.tenants.create(dto.name, checkedLimits(dto.limits ?? {}));
    return { ...view(tenant), apiKey };
  }

  @Get()
  @ApiOperation({ summary: 'Every tenant' })
  @ApiOkResponse({ type: TenantListResponse })
  async list(): Promise<TenantListResponse> {
    return { tenants: (await this.tenants.list()).map(view) };
  }

  @Get(':id')
  @ApiOperation({ summary: 'One tenant' })
  @ApiOkResponse({ type: TenantResponse })
  @ApiErrors({ 404: ['TENANT_NOT_FOUND'] })
  async get(@Param('id') id: string): Promise<TenantResponse> {
    return view(await this.tenants.get(id));
  }

  @Patch(':id')
  @ApiOperation({ summary: "Change a tenant's limits (merged into its current ones)" })
  @ApiOkResponse({ type: TenantResponse })
  @ApiErrors({ ...VALIDATION_ERRORS, 400: [...VALIDATION_ERRORS[400]!, 'INVALID_NETWORK_POLICY'], 404: ['TENANT_NOT_FOUND'] })
  async update(@Param('id') id: string, @Body() dto: UpdateTenantDto): Promise<TenantResponse> {
    return view(await this.tenants.updateLimits(id, checkedLimits(dto.limits)));
  }

  // Issues a new key and revokes every previous one.
  @Post(':id/keys')
  @HttpCode(201)
  @ApiOperation({ summary: 'Issue a new API key for a tenant and revoke all its previous keys' })
  @ApiCreatedResponse({ type: TenantWithKeyResponse })
  @ApiErrors({ 404: ['TENANT_NOT_FOUND'] })
  async rotate(@Param('id') id: string): Promise<TenantWithKeyResponse> {
    const { tenant, apiKey } = await this.tenants.rotateKey(id);
    return { ...view(tenant), apiKey };
  }

  // Its keys answer 403 TENANT_SUSPENDED, its sessions end, its batch items wait.
  @Post(':id/suspend')
  @HttpCode(200)
  @ApiOperation({ summary: 'Suspend a tenant: its keys are refused, its sessions end, its queued batch items wait' })
  @ApiOkResponse({ type: TenantResponse, description: 'The tenant, with suspendedAt set.' })
  @ApiErrors({ 404: ['TENANT_NOT_FOUND'] })
  async suspend(@Param('id') id: string): Promise<TenantResponse> {
    return view(await this.lifecycle.suspend(id));
  }

  @Post(':id/resume')
  @HttpCode(200)
  @ApiOperation({ summary: 'Resume a suspended tenant: its keys work and its queued batch items start again' })
  @ApiOkResponse({ type: TenantResponse, description: 'The tenant, with suspendedAt null.' })
  @ApiErrors({ 404: ['TENANT_NOT_FOUND'] })
  async resume(@Param('id') id: string): Promise<TenantResponse> {
    return view(await this.lifecycle.resume(id));
  }

  // Removes everything the tenant owns; what was removed besides rows, counted.
  @Delete(':id')
  @HttpCode(200)
  @ApiOperation({ summary: 'Delete a tenant and everything it owns (not undoable)' })
  @ApiOkResponse({ type: TenantDeletedResponse, description: 'What was removed besides rows, counted.' })
  @ApiErrors({ 404: ['TENANT_NOT_FOUND'] })
  async delete(@Param('id') id: string): Promise<TenantDeletedResponse> {
    await this.tenants.get(id);
    return { id, deleted: true, ...(await this.lifecycle.delete(id)) };
  }
}
