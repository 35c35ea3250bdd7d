import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiHeader, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiPartialContentResponse, ApiProduces, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import parseRange from 'range-parser';
import { APP_CONFIG, type AppConfig, type TenantPrincipal, THREAD_ID_PATTERN } from '@drydock/core';
import { ArtifactsError, ArtifactsService, toDescriptor, type ArtifactRecord } from '@drydock/artifacts';
import { Principal } from '../auth/principal.decorator.js';
import { TenantRoutes } from '../openapi/api-auth.js';
import { ApiErrors } from '../openapi/api-errors.js';
import { ArtifactListResponse, ArtifactResponse, SignedUrlResponse } from './artifact.response.js';

const BYTES = { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } as const;
import { ArtifactLinks } from './artifact-links.service.js';
import { contentDisposition } from './content-disposition.js';

// Artifacts (API.md "Artifacts"): listing, descriptors, downloads with the tenant key
// and signed links that work without it. Another tenant's artifact is a 404.
@Controller('v1/artifacts')
@TenantRoutes('artifacts')
export class ArtifactsController {
  constructor(
    private readonly artifacts: ArtifactsService,
    private readonly links: ArtifactLinks,
  ) {}

  @ApiOperation({ summary: "The tenant's artifacts, newest first" })
  @ApiQuery({ name: 'threadId', required: false, type: String, description: 'Only those of this thread.' })
  @ApiQuery({ name: 'batchId', required: false, type: String, description: 'Only those of this batch.' })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1 } })
  @ApiOkResponse({ type: ArtifactListResponse })
  @ApiErrors({ 400: ['INVALID_THREAD_ID', 'INVALID_BATCH_ID', 'VALIDATION_FAILED'] })
  @Get()
  async list(
    @Principal() p: TenantPrincipal,
    @Query('threadId') threadId?: string,
    @Query('limit') limit?: string,
    @Query('batchId') batchId?: string,
  ) {
    if (threadId !== undefined && !THREAD_ID_PATTERN.test(threadId)) {
      throw new ArtifactsError('INVALID_THREAD_ID', `threadId ${JSON.stringify(threadId)} is not a valid thread id.`, 400);
    }
    if (batchId !== undefined && !/^bat_[A-Za-z0-9_-]{1,64}$/.test(batchId)) {
      throw new ArtifactsError('INVALID_BATCH_ID', `batchId ${JSON.stringify(batchId)} is not a valid batch id.`, 400);
    }
    const n = limit === undefined ? undefined : Number(limit);
    if (n !== undefined && (!Number.isInteger(n) || n < 1)) {
      throw new ArtifactsError('VALIDATION_FAILED', 'limit must be a positive whole number.', 400);
    }
    const records = await this.artifacts.list(p.tenantId, { threadId, batchId, limit: n });
    return { artifacts: records.map(toDescriptor) };
  }

  @ApiOperation({ summary: "An artifact's descriptor" })
  @ApiOkResponse({ type: ArtifactResponse })
  @ApiErrors({ 404: ['ARTIFACT_NOT_FOUND'] })
  @Get(':id')
  async get(@Principal() p: TenantPrincipal, @Param('id') id: string) {
    return toDescriptor(await this.artifacts.get(p.tenantId, id));
  }

  @ApiOperation({ summary: "An artifact's bytes (Range requests supported)" })
  @ApiHeader({ name: 'Range', required: false, description: 'bytes=a-b' })
  @ApiProduces('application/octet-stream')
  @ApiOkResponse({ description: 'The bytes, with Content-Type, Content-Disposition: attachment and ETag.', content: BYTES })
  @ApiPartialContentResponse({ description: 'The range asked for, with Content-Range.', content: BYTES })
  @ApiErrors({ 404: ['ARTIFACT_NOT_FOUND'], 416: ['RANGE_NOT_SATISFIABLE'] })
  @Get(':id/content')
  async content(@Principal() p: TenantPrincipal, @Param('id') id: string, @Req() req: FastifyRequest, @Res() res: FastifyReply) {
    await sendArtifact(this.artifacts, await this.artifacts.get(p.tenantId, id), req, res);
  }

  @ApiOperation({ summary: 'A signed download link that works without the API key until it expires' })
  @ApiBody({ required: false, schema: { type: 'object', properties: { ttlSeconds: { type: 'integer', minimum: 1, description: 'Default ARTIFACTS_URL_TTL_S; at most ARTIFACTS_URL_MAX_TTL_S.' } } } })
  @ApiOkResponse({ type: SignedUrlResponse })
  @ApiErrors({ 400: ['TTL_OUT_OF_RANGE', 'INVALID_JSON'], 404: ['ARTIFACT_NOT_FOUND'] })
  @Post(':id/url')
  async sign(@Principal() p: TenantPrincipal, @Param('id') id: string, @Body() body: { ttlSeconds?: unknown } = {}) {
    const record = await this.artifacts.get(p.tenantId, id);
    return this.links.sign(record, body?.ttlSeconds);
  }

  @ApiOperation({ summary: 'Delete an artifact (its bytes go when no artifact shares them)' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors({ 404: ['ARTIFACT_NOT_FOUND'] })
  @Delete(':id')
  @HttpCode(204)
  async remove(@Principal() p: TenantPrincipal, @Param('id') id: string): Promise<void> {
    await this.artifacts.delete(p.tenantId, id);
  }
}

// Downloads through a signed link: no API key; the link names the tenant and is checked
// before anything is looked up.
@Controller('v1/signed/artifacts')
@ApiTags('artifacts')
export class SignedArtifactsController {
  constructor(
    private readonly artifacts: ArtifactsService,
    private readonly links: ArtifactLinks,
  ) {}

  @ApiOperation({ summary: 'Download through a signed link (no API key)' })
  @ApiQuery({ name: 'tenant', required: true, type: String })
  @ApiQuery({ name: 'expires', required: true, schema: { type: 'integer' }, description: 'Unix seconds.' })
  @ApiQuery({ name: 'signature', required: true, type: String })
  @ApiHeader({ name: 'Range', required: false, description: 'bytes=a-b' })
  @ApiProduces('application/octet-stream')
  @ApiOkResponse({ description: 'The bytes.', content: BYTES })
  @ApiPartialContentResponse({ description: 'The range asked for.', content: BYTES })
  @ApiErrors({ 403: ['INVALID_SIGNATURE', 'URL_EXPIRED'], 416: ['RANGE_NOT_SATISFIABLE'], 503: ['SERVICE_UNAVAILABLE'] })
  @Get(':id')
  async content(
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
    @Req() req: FastifyRequest,
    @Res() res: FastifyReply,
  ): Promise<void> {
    const tenantId = this.links.verify(id, query);
    const record = await this.artifacts.get(tenantId, id).catch((error: unknown) => {
      // A valid link to an artifact deleted since: the link is simply no good any more.
      if (error instanceof ArtifactsError && error.code === 'ARTIFACT_NOT_FOUND') throw ArtifactsError.invalidSignature();
      throw error;
    });
    await sendArtifact(this.artifacts, record, req, res);
  }
}

// The bytes with Content-Type, Content-Length, Content-Disposition and single-range
// support (RFC 9110: a malformed Range is ignored, several ranges get the whole body).
async function sendArtifact(artifacts: ArtifactsService, record: ArtifactRecord, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  let range: { start: number; end: number } | undefined;
  if (req.headers.range && record.size > 0) {
    const parsed = parseRange(record.size, req.headers.range);
    if (parsed === -1) throw ArtifactsError.rangeNotSatisfiable(record.size);
    if (Array.isArray(parsed) && parsed.type === 'bytes' && parsed.length === 1) range = parsed[0];
  }
  const { stream } = await artifacts.open(record.tenantId, record.id, range);
  void reply
    .status(range ? 206 : 200)
    .headers({
      'Content-Type': record.mime,
      'Content-Disposition': contentDisposition(record.name),
      'Accept-Ranges': 'bytes',
      ETag: `"${record.sha256}"`,
      'X-Content-Type-Options': 'nosniff',
      'Content-Length': String(range ? range.end - range.start + 1 : record.size),
      ...(range ? { 'Content-Range': `bytes ${range.start}-${range.end}/${record.size}` } : {}),
    })
    .send(stream);
}
