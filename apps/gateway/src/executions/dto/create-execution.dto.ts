import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsNotEmpty, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';

export const MAX_CODE_CHARS = 1024 * 1024;

export class CreateExecutionDto {
  @ApiProperty({ maxLength: MAX_CODE_CHARS, description: 'Python source, run in the session\'s REPL (its variables stay for the next run).', example: 'x = 6 * 7\nx' })
  @IsString() @IsNotEmpty() @MaxLength(MAX_CODE_CHARS)
  code: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 100, maximum: 86_400_000, description: "This run's time limit (clamped to the tenant's maximum); default the session's." })
  @IsOptional() @IsInt() @Min(100) @Max(86_400_000)
  timeoutMs?: number;

  @ApiPropertyOptional({ pattern: '^[\\x21-\\x7e]{1,200}$', description: 'The same key with the same code and session returns the first run instead of running again.' })
  @IsOptional() @IsString() @Matches(/^[\x21-\x7e]{1,200}$/, {
    message: 'idempotencyKey must be 1-200 printable ASCII characters without spaces',
  })
  idempotencyKey?: string;
}
