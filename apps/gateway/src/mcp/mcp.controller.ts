import { All, Controller, HttpCode, Post, Req, Res, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { TenantPrincipal } from '@drydock/core';
import { Principal } from '../auth/principal.decorator.js';
import { TenantAuthGuard } from '../auth/tenant-auth.guard.js';
import { DrydockMcpServer } from './drydock-mcp.server.js';

// MCP over Streamable HTTP at /mcp, stateless: each POST carries its JSON-RPC message(s)
// and the tenant's API key, and gets its answer as JSON. Any MCP client (desktop
// assistants, IDE agents) can use a Drydock sandbox through it.
@Controller('mcp')
@UseGuards(TenantAuthGuard)
export class McpController {
  constructor(private readonly mcp: DrydockMcpServer) {}

  @Post()
  @HttpCode(200)
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

  // Stateless: no server-initiated stream to GET and no session to DELETE.
  @All()
  notAllowed(@Res() res: Response): void {
    res.status(405).setHeader('Allow', 'POST').json({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless; POST JSON-RPC messages to it.' },
      id: null,
    });
  }
}
