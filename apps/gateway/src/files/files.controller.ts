import { Body, Controller, Delete, Get, Header, HttpCode, Param, Post, Put, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiCreatedResponse, ApiExtraModels, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiProduces, getSchemaPath } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DrydockError, type TenantPrincipal } from '@drydock/core';
import { VfsService, type VfsEntry, type VfsFileInfo } from '@drydock/vfs';
import { Principal } from '../auth/principal.decorator.js';
import { TenantRoutes } from '../openapi/api-auth.js';
import { ApiErrors, VALIDATION_ERRORS } from '../openapi/api-errors.js';
import {
  ArchiveUploadResponse,
  EditResultResponse,
  FileEntriesResponse,
  FileEntryResponse,
  FileInfoResponse,
  FileTextResponse,
  GlobResultResponse,
  GrepResultResponse,
} from './dto/files.response.js';
import { ArchiveQueryDto, EditFileDto, GlobDto, GrepDto, ListQueryDto, PathQueryDto, ReadQueryDto } from './dto/files.dto.js';
import { ThreadIdPipe } from './thread-id.pipe.js';

const TAR = /^application\/(x-)?tar\s*(;|$)/i;
const GZIP = /^application\/(gzip|x-gzip|tar\+gzip|x-compressed-tar)\s*(;|$)/i;

const ARCHIVE_BODY =
  'A tar archive (ustar, pax or GNU; application/x-tar), or the same gzipped (application/gzip, or application/x-tar ' +
  'with Content-Encoding: gzip). Every regular file becomes a thread file at its name under `path` (a leading / and ./ ' +
  'are dropped; names follow the thread path rules and may not hold ..). Directory entries are implied. A symbolic or ' +
  'hard link, a device or a FIFO refuses the whole archive. Read as it streams, up to VFS_MAX_ARCHIVE_BYTES once ' +
  'gunzipped; nothing is written unless every file is.';

// Whether the archive body is gzipped, from its Content-Type and Content-Encoding.
function isGzipped(headers: FastifyRequest['headers']): boolean {
  const type = headers['content-type'] ?? '';
  const encoding = (headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding !== 'identity' && !(encoding === 'gzip' && TAR.test(type))) {
    throw new DrydockError('UNSUPPORTED_MEDIA_TYPE', `Content-Encoding ${JSON.stringify(encoding)} is not supported; send gzip or none.`, 415);
  }
  if (TAR.test(type)) return encoding === 'gzip';
  if (GZIP.test(type)) return true;
  throw new DrydockError('UNSUPPORTED_MEDIA_TYPE', 'Send the archive as application/x-tar, or gzipped as application/gzip.', 415);
}

const entryView = (e: VfsEntry) => ({
  path: e.path,
  type: e.type,
  size: e.size,
  modifiedAt: e.modifiedAt ? e.modifiedAt.toISOString() : null,
});

const fileView = (f: VfsFileInfo) => ({
  path: f.path,
  type: f.type,
  size: f.size,
  contentType: f.contentType,
  sha256: f.sha256,
  version: f.version,
  createdAt: f.createdAt.toISOString(),
  modifiedAt: f.modifiedAt.toISOString(),
});

// A thread's files (API.md "Files"). Every route is scoped by the caller's tenant and
// the thread in the URL; paths are normalised and checked by the VFS itself.
@Controller('v1/threads/:threadId/files')
@TenantRoutes('files')
@ApiParam({ name: 'threadId', description: `The thread; 1-128 letters, digits, _ . : - starting with a letter or digit.` })
@ApiExtraModels(FileEntryResponse, FileInfoResponse)
@ApiErrors({ ...VALIDATION_ERRORS, 400: [...VALIDATION_ERRORS[400]!, 'INVALID_THREAD_ID', 'INVALID_PATH'] })
export class FilesController {
  constructor(private readonly vfs: VfsService) {}

  @Get()
  @ApiOperation({ summary: 'List a directory of the thread (one level)' })
  @ApiOkResponse({ type: FileEntriesResponse })
  @ApiErrors({ 404: ['FILE_NOT_FOUND'] })
  async list(@Principal() p: TenantPrincipal, @Param('threadId', ThreadIdPipe) threadId: string, @Query() q: ListQueryDto) {
    const entries = await this.vfs.ls({ tenantId: p.tenantId, threadId }, q.path ?? '/');
    return { entries: entries.map(entryView) };
  }

  @Get('content')
  @ApiOperation({ summary: "A file's bytes, with its Content-Type and ETag" })
  @ApiProduces('application/octet-stream')
  @ApiOkResponse({ description: 'The bytes.', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } })
  @ApiErrors({ 404: ['FILE_NOT_FOUND'], 409: ['IS_A_DIRECTORY'] })
  async download(
    @Principal() p: TenantPrincipal,
    @Param('threadId', ThreadIdPipe) threadId: string,
    @Query() q: PathQueryDto,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const { info, content } = await this.vfs.readContent({ tenantId: p.tenantId, threadId }, q.path);
    void reply
      .status(200)
      .headers({ 'Content-Type': info.contentType, ETag: `"${info.sha256}"`, 'X-Content-Type-Options': 'nosniff' })
      .send(content);
  }

  // The body is the file's bytes, whatever its Content-Type (the raw parser is
  // read for this route only, see http/body-parsing.ts).
  @Put('content')
  @ApiOperation({ summary: "Write a file (the body is its bytes; the Content-Type is kept unless application/octet-stream)" })
  @ApiConsumes('application/octet-stream')
  @ApiBody({ description: 'The file bytes, any Content-Type.', schema: { type: 'string', format: 'binary' } })
  @ApiCreatedResponse({ type: FileInfoResponse, description: 'A new file.' })
  @ApiOkResponse({ type: FileInfoResponse, description: 'An existing file replaced.' })
  @ApiErrors({ 409: ['IS_A_DIRECTORY'], 413: ['FILE_TOO_LARGE'], 422: ['TOO_MANY_FILES'], 429: ['QUOTA_EXCEEDED'] })
  async upload(
    @Principal() p: TenantPrincipal,
    @Param('threadId', ThreadIdPipe) threadId: string,
    @Query() q: PathQueryDto,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) res: FastifyReply,
  ) {
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const declared = req.headers['content-type'];
    const { info, created } = await this.vfs.write({ tenantId: p.tenantId, threadId }, q.path, body, {
      contentType: declared && declared !== 'application/octet-stream' ? declared : undefined,
    });
    res.status(created ? 201 : 200);
    return fileView(info);
  }

  // Many files in one request (issue 17): the body is read as it streams
  // (http/body-parsing.ts reads none for this route), checked whole, then written in one transaction.
  @Post('archive')
  @ApiOperation({ summary: 'Write many files at once: a tar archive (or .tar.gz) unpacked under a folder, all or nothing' })
  @ApiConsumes('application/x-tar', 'application/gzip')
  @ApiBody({ description: ARCHIVE_BODY, schema: { type: 'string', format: 'binary' } })
  @ApiCreatedResponse({ type: ArchiveUploadResponse, description: 'Written; at least one file is new.' })
  @ApiOkResponse({ type: ArchiveUploadResponse, description: 'Written; every file replaced an existing one (or the archive held none).' })
  @ApiErrors({
    400: ['INVALID_ARCHIVE', 'UNSUPPORTED_ARCHIVE_ENTRY'],
    409: ['FILE_EXISTS', 'IS_A_DIRECTORY'],
    413: ['FILE_TOO_LARGE', 'BODY_TOO_LARGE', 'ARCHIVE_TOO_MANY_ENTRIES'],
    415: ['UNSUPPORTED_MEDIA_TYPE'],
    422: ['TOO_MANY_FILES'],
    429: ['QUOTA_EXCEEDED'],
  })
  async uploadArchive(
    @Principal() p: TenantPrincipal,
    @Param('threadId', ThreadIdPipe) threadId: string,
    @Query() q: ArchiveQueryDto,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) res: FastifyReply,
  ) {
    const gzip = isGzipped(req.headers);
    try {
      const result = await this.vfs.writeArchive({ tenantId: p.tenantId, threadId }, req.raw, { under: q.path, gzip });
      res.status(result.created > 0 ? 201 : 200);
      return result;
    } catch (error) {
      // What is left of a refused body is read and dropped, so that the answer reaches
      // a client still sending it.
      req.raw.resume();
      throw error;
    }
  }

  @Get('read')
  @ApiOperation({ summary: 'Read a text file as numbered lines (offset/limit)' })
  @ApiOkResponse({ type: FileTextResponse })
  @ApiErrors({ 404: ['FILE_NOT_FOUND'], 409: ['IS_A_DIRECTORY'], 422: ['NOT_A_TEXT_FILE'] })
  async read(@Principal() p: TenantPrincipal, @Param('threadId', ThreadIdPipe) threadId: string, @Query() q: ReadQueryDto) {
    const content = await this.vfs.read({ tenantId: p.tenantId, threadId }, q.path, { offset: q.offset, limit: q.limit });
    return { content };
  }

  @Get('stat')
  @ApiOperation({ summary: 'Describe a file or a directory' })
  @ApiOkResponse({ schema: { oneOf: [{ $ref: getSchemaPath(FileInfoResponse) }, { $ref: getSchemaPath(FileEntryResponse) }] }, description: 'A file (with sha256, version) or a directory.' })
  @ApiErrors({ 404: ['FILE_NOT_FOUND'] })
  async stat(@Principal() p: TenantPrincipal, @Param('threadId', ThreadIdPipe) threadId: string, @Query() q: PathQueryDto) {
    const info = await this.vfs.stat({ tenantId: p.tenantId, threadId }, q.path);
    return 'sha256' in info ? fileView(info) : entryView(info);
  }

  @Post('edit')
  @HttpCode(200)
  @ApiOperation({ summary: 'Replace an exact string in a text file' })
  @ApiOkResponse({ type: EditResultResponse })
  @ApiErrors({ 404: ['FILE_NOT_FOUND'], 409: ['IS_A_DIRECTORY'], 413: ['FILE_TOO_LARGE'], 422: ['STRING_NOT_FOUND', 'AMBIGUOUS_MATCH', 'NOT_A_TEXT_FILE'], 429: ['QUOTA_EXCEEDED'] })
  edit(@Principal() p: TenantPrincipal, @Param('threadId', ThreadIdPipe) threadId: string, @Body() dto: EditFileDto) {
    return this.vfs.edit({ tenantId: p.tenantId, threadId }, dto.path, dto.oldString, dto.newString, dto.replaceAll ?? false);
  }

  @Post('glob')
  @HttpCode(200)
  @ApiOperation({ summary: 'Files whose path matches a glob' })
  @ApiOkResponse({ type: GlobResultResponse })
  @ApiErrors({ 400: ['INVALID_PATTERN'], 404: ['FILE_NOT_FOUND'], 422: ['SEARCH_TIMEOUT'] })
  async glob(@Principal() p: TenantPrincipal, @Param('threadId', ThreadIdPipe) threadId: string, @Body() dto: GlobDto) {
    return { paths: await this.vfs.glob({ tenantId: p.tenantId, threadId }, dto.pattern, dto.path ?? '/') };
  }

  @Post('grep')
  @HttpCode(200)
  @ApiOperation({ summary: 'Search text files for a string or regex' })
  @ApiOkResponse({ type: GrepResultResponse })
  @ApiErrors({ 400: ['INVALID_PATTERN'], 404: ['FILE_NOT_FOUND'], 422: ['SEARCH_TIMEOUT'] })
  // Serialized by the service as the lines arrive (VfsService.grepJson); Fastify sends
  // bytes whose Content-Type is set as they are.
  @Header('Content-Type', 'application/json; charset=utf-8')
  grep(@Principal() p: TenantPrincipal, @Param('threadId', ThreadIdPipe) threadId: string, @Body() dto: GrepDto): Promise<Buffer> {
    return this.vfs.grepJson({ tenantId: p.tenantId, threadId }, dto.pattern, {
      path: dto.path,
      glob: dto.glob,
      outputMode: dto.outputMode,
      regex: dto.regex,
      caseInsensitive: dto.caseInsensitive,
      maxMatches: dto.maxMatches,
    });
  }

  @Delete()
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a file, or a directory and everything under it' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors({ 404: ['FILE_NOT_FOUND'] })
  async remove(@Principal() p: TenantPrincipal, @Param('threadId', ThreadIdPipe) threadId: string, @Query() q: PathQueryDto) {
    await this.vfs.delete({ tenantId: p.tenantId, threadId }, q.path);
  }
}
