import { IsInt, IsNotEmpty, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';

export const MAX_CODE_CHARS = 1024 * 1024;

export class CreateExecutionDto {
  @IsString() @IsNotEmpty() @MaxLength(MAX_CODE_CHARS)
  code: string;

  @IsOptional() @IsInt() @Min(100) @Max(86_400_000)
  timeoutMs?: number;

  @IsOptional() @IsString() @Matches(/^[\x21-\x7e]{1,200}$/, {
    message: 'idempotencyKey must be 1-200 printable ASCII characters without spaces',
  })
  idempotencyKey?: string;
}
