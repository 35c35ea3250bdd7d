// The server half of bench/http-adapter: one Nest controller shaped like the gateway's
// execution route (a path parameter, a JSON body checked by a ValidationPipe, a JSON
// answer of the execution record's size), on the adapter named by argv[2], listening on
// argv[3]. GET /cpu answers process.cpuUsage() for the bench to take differences.
import 'reflect-metadata';
import { Body, Controller, Get, HttpCode, Module, Param, Post, ValidationPipe, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

class ExecuteBody {
  @IsString()
  @MaxLength(100_000)
  code!: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(3_600_000)
  timeoutMs?: number;
}

@Controller()
class BenchController {
  @Post('v1/sessions/:id/executions')
  @HttpCode(200)
  execute(@Param('id') sessionId: string, @Body() body: ExecuteBody) {
    return {
      id: 'exe_0123456789abcdefghij',
      sessionId,
      threadId: 'thr_0123456789abcdefghij',
      status: 'ok',
      code: body.code,
      stdout: '1\n',
      stderr: '',
      truncated: false,
      result: null,
      error: null,
      stateLost: false,
      durationMs: 0,
      cpuMs: 0.4,
      files: { changed: [], deleted: [] },
      artifacts: [],
      artifactsSkipped: [],
      createdAt: new Date().toISOString(),
      finishedAt: new Date().toISOString(),
    };
  }

  @Get('cpu')
  cpu() {
    return process.cpuUsage();
  }
}

@Module({ controllers: [BenchController] })
class BenchModule {}

const [adapter, port] = [process.argv[2], Number(process.argv[3])];
let app: INestApplication;
if (adapter === 'fastify') {
  const { FastifyAdapter } = await import('@nestjs/platform-fastify');
  app = await NestFactory.create(BenchModule, new FastifyAdapter(), { logger: false });
} else if (adapter === 'express') {
  app = await NestFactory.create(BenchModule, { logger: false });
  // As the gateway has it (apps/gateway/src/bootstrap.ts).
  (app as unknown as { set(key: string, value: unknown): void }).set('etag', false);
} else {
  throw new Error(`unknown adapter ${adapter}`);
}
app.useGlobalPipes(new ValidationPipe({ whitelist: true, transform: true }));
await app.listen(port, '127.0.0.1');
console.log('ready');
