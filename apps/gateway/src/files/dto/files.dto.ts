import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsNotEmpty, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { DEFAULT_MAX_MATCHES, MAX_GREP_MATCHES } from '@drydock/vfs';

// A sanity bound on the query string only: the VFS applies the real path rules (and
// answers INVALID_PATH), so this stays well above its 4096-byte limit.
const MAX_PATH = 16 * 1024;

export class PathQueryDto {
  @ApiProperty({ description: 'An absolute path in the thread, e.g. /data/sales.csv.', maxLength: MAX_PATH })
  @IsString() @IsNotEmpty() @MaxLength(MAX_PATH)
  path: string;
}

export class ListQueryDto {
  @ApiPropertyOptional({ description: 'A directory of the thread; default /.', maxLength: MAX_PATH })
  @IsOptional() @IsString() @MaxLength(MAX_PATH)
  path?: string;
}

export class ArchiveQueryDto {
  @ApiPropertyOptional({ description: 'The folder the archive is unpacked under (created as needed); default /.', maxLength: MAX_PATH })
  @IsOptional() @IsString() @MaxLength(MAX_PATH)
  path?: string;
}

export class ReadQueryDto extends PathQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 0, description: 'First line to return (0-based).' })
  @IsOptional() @Type(() => Number) @IsInt() @Min(0)
  offset?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 10_000, description: 'Lines to return.' })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(10_000)
  limit?: number;
}

export class EditFileDto {
  @ApiProperty({ description: 'An absolute path in the thread, e.g. /data/sales.csv.', maxLength: MAX_PATH })
  @IsString() @IsNotEmpty() @MaxLength(MAX_PATH)
  path: string;

  @ApiProperty({ description: 'The exact text to replace; it must occur once unless replaceAll.' })
  @IsString() @IsNotEmpty()
  oldString: string;

  @ApiProperty()
  @IsString()
  newString: string;

  @ApiPropertyOptional({ default: false })
  @IsOptional() @IsBoolean()
  replaceAll?: boolean;
}

export class GlobDto {
  @ApiProperty({ maxLength: 1024, example: '**/*.csv' })
  @IsString() @IsNotEmpty() @MaxLength(1024)
  pattern: string;

  @ApiPropertyOptional({ description: 'A directory of the thread; default /.', maxLength: MAX_PATH })
  @IsOptional() @IsString() @MaxLength(MAX_PATH)
  path?: string;
}

export class GrepDto {
  @ApiProperty({ maxLength: 1024, description: 'A literal string, or a JavaScript regex with regex: true (one that has a PostgreSQL form).' })
  @IsString() @IsNotEmpty() @MaxLength(1024)
  pattern: string;

  @ApiPropertyOptional({ description: 'A directory of the thread; default /.', maxLength: MAX_PATH })
  @IsOptional() @IsString() @MaxLength(MAX_PATH)
  path?: string;

  @ApiPropertyOptional({ maxLength: 1024, description: 'Only files matching this glob.' })
  @IsOptional() @IsString() @MaxLength(1024)
  glob?: string;

  @ApiPropertyOptional({ enum: ['files_with_matches', 'content', 'count'], default: 'files_with_matches' })
  @IsOptional() @IsIn(['files_with_matches', 'content', 'count'])
  outputMode?: 'files_with_matches' | 'content' | 'count';

  @ApiPropertyOptional({ default: false })
  @IsOptional() @IsBoolean()
  regex?: boolean;

  @ApiPropertyOptional({ default: false })
  @IsOptional() @IsBoolean()
  caseInsensitive?: boolean;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: MAX_GREP_MATCHES,
    default: DEFAULT_MAX_MATCHES,
    description: 'At most this many matching lines (content), files or counts; past it the answer says truncated.',
  })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(MAX_GREP_MATCHES)
  maxMatches?: number;
}
