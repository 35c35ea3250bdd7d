import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBody,
  ApiConsumes,
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  getSchemaPath,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DrydockError, type TenantPrincipal } from '@drydock/core';
import { BatchEventStreams, BatchesService, type BatchItemView, type BatchView } from '@drydock/batches';
import { Principal } from '../auth/principal.decorator.js';
import { SseWriter } from '../executions/sse-writer.js';
import { ErrorResponseFilter } from '../http/error-response.filter.js';
import { networkOption } from '../http/network-option.js';
import { ApiErrors, VALIDATION_ERRORS } from '../openapi/api-errors.js';
import { TenantRoutes } from '../openapi/api-auth.js';
import {
  BatchItemListResponse,
  BatchListResponse,
  BatchResponse,
  SubmittedBatchResponse,
} from './dto/batch.response.js';
import { CancelBatchDto, ListBatchesQueryDto, ListItemsQueryDto, SubmitBatchDto } from './dto/batches.dto.js';

const NDJSON = /^application\/(x-)?ndjson\b/i;
const JSON_TYPE = /\bjson\b/i;

const NDJSON_BODY =
  'NDJSON: the first line is the batch options (a JSON object, `{}` for none; the fields of the JSON form but `items`), ' +
  'every further line one item `{"code", "files"?, "id"?}` (see BatchItemDto). Blank lines are skipped. The body is read ' +
  'as a stream, up to BATCH_MAX_BODY_BYTES. `application/ndjson` is accepted too.';

const RESULTS_BODY =
  'NDJSON: every finished item (ok, error, timeout, memory, killed, cancelled), one JSON object a line in index order, ' +
  'each a BatchItemResponse. Streamed as it is read; items still queued or running are left out.';

const EVENTS_BODY =
  'Server-sent events: `progress` (data: a BatchResponse; at least once, then at most every 250 ms while the counts ' +
  'change), `item` (data: `{index, id, status}` as each item ends), then `done` (data: the final BatchResponse) when ' +
  'nothing is queued or running and the stream ends. A failure after the stream started comes as an `error` event ' +
  'with `{code, message}`.';

// Batches (API.md "Batches"): one-shot runs of many independent items. Another
// tenant's batch is a 404 on every route.
@Controller('v1/batches')
@TenantRoutes('batches')
export class BatchesController {
  constructor(
    private readonly batches: BatchesService,
    private readonly streams: BatchEventStreams,
  ) {}

  // JSON ({"items": [...], ...options}) or NDJSON (options on the first line, an item a
  // line). 202 for a new batch; 200 with the existing one for a repeated idempotencyKey.
  @Post()
  @ApiOperation({
    summary: 'Submit a batch of independent Python runs (JSON, or NDJSON for large batches)',
    requestBody: {
      required: true,
      content: {
        'application/json': { schema: { $ref: getSchemaPath(SubmitBatchDto) } },
        'application/x-ndjson': {
          schema: { type: 'string', description: NDJSON_BODY },
          example: '{"timeoutMs":5000}\n{"code":"print(1)"}\n{"code":"print(2)","id":"two"}\n',
        },
      },
    },
  })
  @ApiExtraModels(SubmitBatchDto)
  @ApiConsumes('application/json', 'application/x-ndjson')
  @ApiAcceptedResponse({ type: SubmittedBatchResponse, description: 'A new batch, queued.' })
  @ApiOkResponse({ type: SubmittedBatchResponse, description: 'The tenant already used this idempotencyKey: its batch (nothing new is recorded).' })
  @ApiErrors({
    400: ['BATCH_EMPTY', 'INVALID_BATCH_ITEM', 'INVALID_BATCH_OPTIONS', 'INVALID_JSON', 'INVALID_NDJSON', 'JSON_TOO_DEEP', 'INVALID_TEMPLATE', 'INVALID_NETWORK_POLICY'],
    403: ['NETWORK_FORBIDDEN'],
    404: ['TEMPLATE_NOT_FOUND'],
    409: ['TEMPLATE_NOT_READY'],
    413: ['BATCH_TOO_LARGE', 'BODY_TOO_LARGE', 'NDJSON_LINE_TOO_LONG'],
    415: ['UNSUPPORTED_MEDIA_TYPE'],
    422: ['NETWORK_NOT_ALLOWED'],
  })
  async submit(@Principal() principal: TenantPrincipal, @Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const type = req.headers['content-type'] ?? '';
    let submitted;
    // The options' `network` (either form) is read as a session's is.
    if (NDJSON.test(type)) submitted = await this.batches.submitNdjson(principal, req.raw, networkOption);
    else if (JSON_TYPE.test(type)) submitted = await this.batches.submitJson(principal, req.body, networkOption);
    else {
      throw new DrydockError(
        'UNSUPPORTED_MEDIA_TYPE',
        'Send a batch as application/json or application/x-ndjson.',
        415,
      );
    }
    void reply.status(submitted.created ? 202 : 200).send(submitted.batch);
  }

  @Get()
  @ApiOperation({ summary: "The tenant's batches, newest first, a page at a time" })
  @ApiOkResponse({ type: BatchListResponse })
  @ApiErrors(VALIDATION_ERRORS)
  list(@Principal() principal: TenantPrincipal, @Query() query: ListBatchesQueryDto): Promise<{ batches: BatchView[]; next: string | null }> {
    return this.batches.list(principal.tenantId, { limit: query.limit ?? 50, before: query.before });
  }

  @Get(':id')
  @ApiOperation({ summary: 'One batch: its status and counts' })
  @ApiOkResponse({ type: BatchResponse })
  @ApiErrors({ 404: ['BATCH_NOT_FOUND'] })
  get(@Principal() principal: TenantPrincipal, @Param('id') id: string): Promise<BatchView> {
    return this.batches.get(principal.tenantId, id);
  }

  @Get(':id/items')
  @ApiOperation({ summary: "A page of a batch's items with their output, in index order" })
  @ApiOkResponse({ type: BatchItemListResponse })
  @ApiErrors({ ...VALIDATION_ERRORS, 404: ['BATCH_NOT_FOUND'] })
  items(@Principal() principal: TenantPrincipal, @Param('id') id: string, @Query() query: ListItemsQueryDto): Promise<{ items: BatchItemView[] }> {
    return this.batches.items(principal.tenantId, id, { status: query.status, offset: query.offset ?? 0, limit: query.limit ?? 100 });
  }

  // Every finished item as NDJSON, written as it is read (page by page, with the
  // socket's backpressure), never built whole.
  @Get(':id/results')
  @ApiOperation({ summary: 'Every finished item of a batch as NDJSON, one item a line' })
  @ApiProduces('application/x-ndjson')
  @ApiOkResponse({
    description: 'The finished items, one JSON object (a BatchItemResponse) a line.',
    schema: { type: 'string', description: RESULTS_BODY },
    example: '{"index":0,"id":null,"status":"ok","attempts":1,"stdout":"1\\n",…}\n{"index":1,"id":"pd","status":"error",…}\n',
  })
  @ApiErrors({ 404: ['BATCH_NOT_FOUND'] })
  async results(@Principal() principal: TenantPrincipal, @Param('id') id: string, @Req() req: FastifyRequest, @Res() reply: FastifyReply) {
    const lines = this.batches.results(principal.tenantId, id);
    // The first page is read before the headers go, so a 404 is still a JSON error.
    const first = await lines.next();
    reply.hijack();
    const res = reply.raw;
    res.statusCode = 200;
    res.setHeader('Content-Type', 'application/x-ndjson; charset=utf-8');
    let closed = false;
    const onClose = () => (closed = true);
    req.raw.on('close', onClose);
    try {
      for (let next = first; !next.done && !closed; next = await lines.next()) {
        if (!res.write(next.value)) await roomOrClose(res);
      }
    } finally {
      req.raw.off('close', onClose);
      await lines.return(undefined);
      res.end();
    }
  }

  // Server-sent events: `progress` (the counts, at most every 250 ms), `item` as each
  // item ends, `done` when nothing is queued or running.
  @Get(':id/events')
  @ApiOperation({ summary: "Follow a batch's progress as server-sent events until it is done" })
  @ApiProduces('text/event-stream')
  @ApiOkResponse({
    description: 'An event stream: progress, item, done.',
    schema: { type: 'string', description: EVENTS_BODY },
    example: 'event: progress\ndata: {"id":"bat_…","status":"running","total":2,…}\n\nevent: item\ndata: {"index":0,"id":null,"status":"ok"}\n\n',
  })
  @ApiErrors({ 404: ['BATCH_NOT_FOUND'] })
  async events(@Principal() principal: TenantPrincipal, @Param('id') id: string, @Req() req: FastifyRequest, @Res() reply: FastifyReply) {
    const abort = new AbortController();
    req.raw.on('close', () => abort.abort());
    const sse = new SseWriter(reply);
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
  @ApiOperation({ summary: 'Cancel a batch: queued items never run; running ones finish, or are killed with kill: true' })
  @ApiBody({ type: CancelBatchDto, required: false, description: 'May be left out: the running items finish.' })
  @ApiAcceptedResponse({ type: BatchResponse, description: 'The batch: cancelled, or cancelling until the items still running end.' })
  @ApiErrors({ ...VALIDATION_ERRORS, 404: ['BATCH_NOT_FOUND'] })
  cancel(@Principal() principal: TenantPrincipal, @Param('id') id: string, @Body() dto: CancelBatchDto): Promise<BatchView> {
    return this.batches.cancel(principal.tenantId, id, { kill: dto.kill });
  }
}

// Resolves when the response can take more (`drain`) or is gone (`close`), and takes
// both listeners off again: a slowly read stream waits once per write.
function roomOrClose(res: FastifyReply['raw']): Promise<void> {
  if (res.destroyed) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
