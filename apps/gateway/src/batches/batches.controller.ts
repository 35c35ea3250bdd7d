import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import { DrydockError, type TenantPrincipal } from '@drydock/core';
import { BatchEventStreams, BatchesService } from '@drydock/batches';
import { Principal } from '../auth/principal.decorator.js';
import { TenantAuthGuard } from '../auth/tenant-auth.guard.js';
import { SseWriter } from '../executions/sse-writer.js';
import { ErrorResponseFilter } from '../http/error-response.filter.js';
import { CancelBatchDto, ListBatchesQueryDto, ListItemsQueryDto } from './dto/batches.dto.js';

const NDJSON = /^application\/(x-)?ndjson\b/i;
const JSON_TYPE = /\bjson\b/i;

// Batches (API.md "Batches"): one-shot runs of many independent items. Another
// tenant's batch is a 404 on every route.
@Controller('v1/batches')
@UseGuards(TenantAuthGuard)
export class BatchesController {
  constructor(
    private readonly batches: BatchesService,
    private readonly streams: BatchEventStreams,
  ) {}

  // JSON ({"items": [...], ...options}) or NDJSON (options on the first line, an item a
  // line). 202 for a new batch; 200 with the existing one for a repeated idempotencyKey.
  @Post()
  async submit(@Principal() principal: TenantPrincipal, @Req() req: Request, @Res() res: Response): Promise<void> {
    const type = req.headers['content-type'] ?? '';
    let submitted;
    if (NDJSON.test(type)) submitted = await this.batches.submitNdjson(principal, req);
    else if (JSON_TYPE.test(type)) submitted = await this.batches.submitJson(principal, req.body);
    else {
      throw new DrydockError(
        'UNSUPPORTED_MEDIA_TYPE',
        'Send a batch as application/json or application/x-ndjson.',
        415,
      );
    }
    res.status(submitted.created ? 202 : 200).json(submitted.batch);
  }

  @Get()
  list(@Principal() principal: TenantPrincipal, @Query() query: ListBatchesQueryDto) {
    return this.batches.list(principal.tenantId, { limit: query.limit ?? 50, before: query.before });
  }

  @Get(':id')
  get(@Principal() principal: TenantPrincipal, @Param('id') id: string) {
    return this.batches.get(principal.tenantId, id);
  }

  @Get(':id/items')
  items(@Principal() principal: TenantPrincipal, @Param('id') id: string, @Query() query: ListItemsQueryDto) {
    return this.batches.items(principal.tenantId, id, { status: query.status, offset: query.offset ?? 0, limit: query.limit ?? 100 });
  }

  // Every finished item as NDJSON, written as it is read (page by page, with the
  // socket's backpressure), never built whole.
  @Get(':id/results')
  async results(@Principal() principal: TenantPrincipal, @Param('id') id: string, @Req() req: Request, @Res() res: Response) {
    const lines = this.batches.results(principal.tenantId, id);
    // The first page is read before the headers go, so a 404 is still a JSON error.
    const first = await lines.next();
    res.status(200).setHeader('Content-Type', 'application/x-ndjson; charset=utf-8');
    let closed = false;
    req.on('close', () => (closed = true));
    try {
      for (let next = first; !next.done && !closed; next = await lines.next()) {
        if (!res.write(next.value)) await new Promise<void>((resolve) => res.once('drain', resolve).once('close', resolve));
      }
    } finally {
      await lines.return(undefined);
      res.end();
    }
  }

  // Server-sent events: `progress` (the counts, at most every 250 ms), `item` as each
  // item ends, `done` when nothing is queued or running.
  @Get(':id/events')
  async events(@Principal() principal: TenantPrincipal, @Param('id') id: string, @Req() req: Request, @Res() res: Response) {
    const abort = new AbortController();
    req.on('close', () => abort.abort());
    const sse = new SseWriter(res);
    try {
      for await (const { event, data } of this.streams.follow(principal.tenantId, id, abort.signal)) sse.send(event, data);
    } catch (error) {
      if (!sse.started) throw error;
      sse.send('error', new ErrorResponseFilter().toResponse(error).body.error);
    }
    sse.end();
  }

  @Post(':id/cancel')
  @HttpCode(202)
  cancel(@Principal() principal: TenantPrincipal, @Param('id') id: string, @Body() dto: CancelBatchDto) {
    return this.batches.cancel(principal.tenantId, id, { kill: dto.kill });
  }
}
