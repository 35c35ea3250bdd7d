import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsNotEmpty, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

// A sanity bound on the query string only: the VFS applies the real path rules (and
// answers INVALID_PATH), so this stays well above its 4096-byte limit.
const MAX_PATH = 16 * 1024;

export class PathQueryDto {
  @IsString() @IsNotEmpty() @MaxLength(MAX_PATH)
  path: string;
}

export class ListQueryDto {
  @IsOptional() @IsString() @MaxLength(MAX_PATH)
  path?: string;
}

export class ReadQueryDto extends PathQueryDto {
  @IsOptional() @Type(() => Number) @IsInt() @Min(0)
  offset?: number;

  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(10_000)
  limit?: number;
}

export class EditFileDto {
  @IsString() @IsNotEmpty() @MaxLength(MAX_PATH)
  path: string;

  @IsString() @IsNotEmpty()
  oldString: string;

  @IsString()
  newString: string;

  @IsOptional() @IsBoolean()
  replaceAll?: boolean;
}

export class GlobDto {
  @IsString() @IsNotEmpty() @MaxLength(1024)
  pattern: string;

  @IsOptional() @IsString() @MaxLength(MAX_PATH)
  path?: string;
}

export class GrepDto {
  @IsString() @IsNotEmpty() @MaxLength(1024)
  pattern: string;

  @IsOptional() @IsString() @MaxLength(MAX_PATH)
  path?: string;

  @IsOptional() @IsString() @MaxLength(1024)
  glob?: string;

  @IsOptional() @IsIn(['files_with_matches', 'content', 'count'])
  outputMode?: 'files_with_matches' | 'content' | 'count';

  @IsOptional() @IsBoolean()
  regex?: boolean;

  @IsOptional() @IsBoolean()
  caseInsensitive?: boolean;
}
