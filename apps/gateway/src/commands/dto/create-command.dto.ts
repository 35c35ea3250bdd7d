import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsBoolean, IsInt, IsNotEmpty, IsObject, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { MAX_ENV_VARS } from '@drydock/sessions';

export const MAX_COMMAND_CHARS = 256 * 1024;
export const MAX_ARGS = 4096;
export const MAX_STDIN_CHARS = 1024 * 1024;

export class CreateCommandDto {
  @ApiPropertyOptional({ maxLength: MAX_COMMAND_CHARS, description: 'A line run by `/bin/bash -c` (pipes, globs, `&&`). Give this or `argv`.', example: 'ls -la | head' })
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(MAX_COMMAND_CHARS)
  command?: string;

  @ApiPropertyOptional({ type: [String], maxItems: MAX_ARGS, description: 'A program and its arguments, run without a shell. Give this or `command`.', example: ['git', 'status', '--short'] })
  @IsOptional() @IsArray() @ArrayMaxSize(MAX_ARGS) @IsString({ each: true }) @MaxLength(MAX_COMMAND_CHARS, { each: true })
  argv?: string[];

  @ApiPropertyOptional({ default: '/session', description: 'Where it starts: /session or a folder under it.' })
  @IsOptional() @IsString() @MaxLength(4096)
  cwd?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, description: `Variables added to the sandbox's environment (at most ${MAX_ENV_VARS}; DRYDOCK_*, HOME, USER and LOGNAME are the platform's).` })
  @IsOptional() @IsObject()
  env?: Record<string, string>;

  @ApiPropertyOptional({ maxLength: MAX_STDIN_CHARS, description: 'Written to the process\'s standard input, which is then closed. Without it, standard input is empty.' })
  @IsOptional() @IsString() @MaxLength(MAX_STDIN_CHARS)
  stdin?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 100, maximum: 86_400_000, description: "The command's time limit (clamped to the tenant's maximum); default the session's. At the limit its whole process group is killed; the REPL's variables stay." })
  @IsOptional() @IsInt() @Min(100) @Max(86_400_000)
  timeoutMs?: number;

  @ApiPropertyOptional({ default: false, description: 'Start a background process and answer 202 with its id and pid at once (`timeoutMs` does not apply to it).' })
  @IsOptional() @IsBoolean()
  background?: boolean;

  @ApiPropertyOptional({ pattern: '^[\\x21-\\x7e]{1,200}$', description: 'The same key with the same command and session returns the first run instead of running again.' })
  @IsOptional() @IsString() @Matches(/^[\x21-\x7e]{1,200}$/, {
    message: 'idempotencyKey must be 1-200 printable ASCII characters without spaces',
  })
  idempotencyKey?: string;
}
