import { ApiProperty } from '@nestjs/swagger';
import { IsIn } from 'class-validator';

export const PROCESS_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGKILL', 'SIGHUP'] as const;

export class ProcessSignalDto {
  @ApiProperty({ enum: PROCESS_SIGNALS, description: "Sent to the process's group (what it started too)." })
  @IsIn(PROCESS_SIGNALS)
  signal: (typeof PROCESS_SIGNALS)[number];
}
