import { Controller, Delete, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiResponse } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
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
  async post(@Principal() principal: TenantPrincipal, @Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const server = this.mcp.create(principal);
    // The transport writes Node's response itself.
    reply.hijack();
    const res = reply.raw;
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req.raw, res, req.body);
  }

  // Stateless: no server-initiated stream to GET and no session to DELETE (the two other
  // methods of Streamable HTTP); any other method is an unknown route.
  @Get()
  @ApiOperation({ summary: 'Not available: the endpoint is stateless (405)' })
  @ApiResponse({ status: 405, description: 'Allow: POST' })
  getNotAllowed(@Res() reply: FastifyReply): void {
    this.notAllowed(reply);
  }

  @Delete()
  @ApiOperation({ summary: 'Not available: there is no MCP session to end (405)' })
  @ApiResponse({ status: 405, description: 'Allow: POST' })
  deleteNotAllowed(@Res() reply: FastifyReply): void {
    this.notAllowed(reply);
  }

  private notAllowed(reply: FastifyReply): void {
    void reply.status(405).header('Allow', 'POST').send({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless; POST JSON-RPC messages to it.' },
      id: null,
    });
  }
}
