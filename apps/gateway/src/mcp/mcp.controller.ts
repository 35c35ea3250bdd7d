import { Controller, Delete, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiResponse } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { TenantPrincipal } from '@drydock/core';
import { Principal } from '../auth/principal.decorator.js';
import { TenantRoutes } from '../openapi/api-auth.js';
import { DrydockMcpServer } from './drydock-mcp.server.js';

// MCP over Streamable HTTP at /mcp, stateless: each POST carries its JSON-RPC message(s)
// and the tenant's API key, and gets its answer as JSON. Any MCP client (desktop
// assistants, IDE agents) can use a Drydock sandbox through it.
@Controller('mcp')
@TenantRoutes('mcp')
export class McpController {
  constructor(private readonly mcp: DrydockMcpServer) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({
    summary: 'The MCP server (Streamable HTTP, stateless): JSON-RPC in, JSON-RPC out',
    description: 'Tools: Python in a thread\'s session, the thread\'s files; resources: files and artifacts. See docs/mcp.md.',
  })
  @ApiBody({ description: 'A JSON-RPC 2.0 message or batch (initialize, tools/list, tools/call, resources/read, …).', schema: { type: 'object', additionalProperties: true } })
  @ApiOkResponse({ description: 'The JSON-RPC answer.', schema: { type: 'object', additionalProperties: true } })
  async post(@Principal() principal: TenantPrincipal, @Req() req: Request, @Res() res: Response): Promise<void> {
    const server = this.mcp.create(principal);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  }

  // Stateless: no server-initiated stream to GET and no session to DELETE (the two other
  // methods of Streamable HTTP); any other method is an unknown route.
  @Get()
  @ApiOperation({ summary: 'Not available: the endpoint is stateless (405)' })
  @ApiResponse({ status: 405, description: 'Allow: POST' })
  getNotAllowed(@Res() res: Response): void {
    this.notAllowed(res);
  }

  @Delete()
  @ApiOperation({ summary: 'Not available: there is no MCP session to end (405)' })
  @ApiResponse({ status: 405, description: 'Allow: POST' })
  deleteNotAllowed(@Res() res: Response): void {
    this.notAllowed(res);
  }

  private notAllowed(@Res() res: Response): void {
    res.status(405).setHeader('Allow', 'POST').json({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless; POST JSON-RPC messages to it.' },
      id: null,
    });
  }
}
