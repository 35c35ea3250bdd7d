import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, Req, Res, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { TenantPrincipal } from '@drydock/core';
import { VfsService, type VfsEntry, type VfsFileInfo } from '@drydock/vfs';
import { Principal } from '../auth/principal.decorator.js';
import { TenantAuthGuard } from '../auth/tenant-auth.guard.js';
import { EditFileDto, GlobDto, GrepDto, ListQueryDto, PathQueryDto, ReadQueryDto } from './dto/files.dto.js';
import { ThreadIdPipe } from './thread-id.pipe.js';

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
@UseGuards(TenantAuthGuard)
export class FilesController {
  constructor(private readonly vfs: VfsService) {}

  @Get()
  async list(@Principal() p: TenantPrincipal, @Param('threadId', ThreadIdPipe) threadId: string, @Query() q: ListQueryDto) {
    const entries = await this.vfs.ls({ tenantId: p.tenantId, threadId }, q.path ?? '/');
    return { entries: entries.map(entryView) };
  }

  @Get('content')
  async download(
    @Principal() p: TenantPrincipal,
    @Param('threadId', ThreadIdPipe) threadId: string,
    @Query() q: PathQueryDto,
    @Res() res: Response,
  ): Promise<void> {
    const { info, content } = await this.vfs.readContent({ tenantId: p.tenantId, threadId }, q.path);
    res.status(200);
    res.setHeader('Content-Type', info.contentType);
    res.setHeader('Content-Length', String(content.length));
    res.setHeader('ETag', `"${info.sha256}"`);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.end(content);
  }

  // The body is the file's bytes, whatever its Content-Type (the raw parser is
  // registered for this route only, see bootstrap.ts).
  @Put('content')
  async upload(
    @Principal() p: TenantPrincipal,
    @Param('threadId', ThreadIdPipe) threadId: string,
    @Query() q: PathQueryDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ) {
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const declared = req.headers['content-type'];
    const { info, created } = await this.vfs.write({ tenantId: p.tenantId, threadId }, q.path, body, {
      contentType: declared && declared !== 'application/octet-stream' ? declared : undefined,
    });
    res.status(created ? 201 : 200);
    return fileView(info);
  }

  @Get('read')
  async read(@Principal() p: TenantPrincipal, @Param('threadId', ThreadIdPipe) threadId: string, @Query() q: ReadQueryDto) {
    const content = await this.vfs.read({ tenantId: p.tenantId, threadId }, q.path, { offset: q.offset, limit: q.limit });
    return { content };
  }

  @Get('stat')
  async stat(@Principal() p: TenantPrincipal, @Param('threadId', ThreadIdPipe) threadId: string, @Query() q: PathQueryDto) {
    const info = await this.vfs.stat({ tenantId: p.tenantId, threadId }, q.path);
    return 'sha256' in info ? fileView(info) : entryView(info);
  }

  @Post('edit')
  @HttpCode(200)
  edit(@Principal() p: TenantPrincipal, @Param('threadId', ThreadIdPipe) threadId: string, @Body() dto: EditFileDto) {
    return this.vfs.edit({ tenantId: p.tenantId, threadId }, dto.path, dto.oldString, dto.newString, dto.replaceAll ?? false);
  }

  @Post('glob')
  @HttpCode(200)
  async glob(@Principal() p: TenantPrincipal, @Param('threadId', ThreadIdPipe) threadId: string, @Body() dto: GlobDto) {
    return { paths: await this.vfs.glob({ tenantId: p.tenantId, threadId }, dto.pattern, dto.path ?? '/') };
  }

  @Post('grep')
  @HttpCode(200)
  grep(@Principal() p: TenantPrincipal, @Param('threadId', ThreadIdPipe) threadId: string, @Body() dto: GrepDto) {
    return this.vfs.grep({ tenantId: p.tenantId, threadId }, dto.pattern, {
      path: dto.path,
      glob: dto.glob,
      outputMode: dto.outputMode,
      regex: dto.regex,
      caseInsensitive: dto.caseInsensitive,
    });
  }

  @Delete()
  @HttpCode(204)
  async remove(@Principal() p: TenantPrincipal, @Param('threadId', ThreadIdPipe) threadId: string, @Query() q: PathQueryDto) {
    await this.vfs.delete({ tenantId: p.tenantId, threadId }, q.path);
  }
}
