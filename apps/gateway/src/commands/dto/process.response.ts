import { ApiProperty } from '@nestjs/swagger';
import type { ProcessView } from '@drydock/sessions';

export class ProcessStartedResponse {
  @ApiProperty({ example: 'exe_01jd6v4m9t2q8x', description: 'The process id (also its execution record, GET /v1/executions/:id).' }) id: string;
  @ApiProperty({ type: 'integer', nullable: true, description: 'Its pid in the sandbox.' }) pid: number | null;
  @ApiProperty({ enum: ['running'] }) status: 'running';
}

export class ProcessResponse implements ProcessView {
  @ApiProperty({ example: 'exe_01jd6v4m9t2q8x' }) id: string;
  @ApiProperty({ type: 'integer', nullable: true }) pid: number | null;
  @ApiProperty({ example: 'python3 -m http.server 8000', description: 'The shell line it was given, or its argv.' }) command: string;
  @ApiProperty({ enum: ['running', 'exited'] }) status: 'running' | 'exited';
  @ApiProperty({ type: 'integer', nullable: true }) exitCode: number | null;
  @ApiProperty({ type: 'string', nullable: true, example: 'SIGTERM' }) signal: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) startedAt: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) endedAt: string | null;
}

export class ProcessListResponse {
  @ApiProperty({ type: () => [ProcessResponse], description: 'Newest first, at most 200.' }) processes: ProcessResponse[];
}

export class SignalDeliveredResponse {
  @ApiProperty({ description: 'Whether the signal reached the process (false: it had just ended).' }) delivered: boolean;
}
