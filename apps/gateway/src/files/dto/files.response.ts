import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { GrepResult } from '@drydock/vfs';

// The response shapes of a thread's files (API.md "Files"), for the OpenAPI document.

export class FileEntryResponse {
  @ApiProperty({ example: '/data/sales.csv' }) path: string;
  @ApiProperty({ enum: ['file', 'directory'] }) type: 'file' | 'directory';
  @ApiProperty({ type: 'integer' }) size: number;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) modifiedAt: string | null;
}

export class FileEntriesResponse {
  @ApiProperty({ type: () => [FileEntryResponse] }) entries: FileEntryResponse[];
}

export class FileInfoResponse {
  @ApiProperty() path: string;
  @ApiProperty({ enum: ['file'] }) type: 'file';
  @ApiProperty({ type: 'integer' }) size: number;
  @ApiProperty({ example: 'text/csv' }) contentType: string;
  @ApiProperty() sha256: string;
  @ApiProperty({ type: 'integer', description: 'Goes up by one with every write.' }) version: number;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) modifiedAt: string;
}

export class ArchiveUploadResponse {
  @ApiProperty({ example: '/data', description: 'The folder the archive was unpacked under.' }) path: string;
  @ApiProperty({ type: 'integer', description: 'Files written (every regular file of the archive).' }) written: number;
  @ApiProperty({ type: 'integer', description: 'Of those, files that did not exist before; the others were replaced.' }) created: number;
  @ApiProperty({ type: 'integer', description: 'Their total size.' }) bytes: number;
  @ApiProperty({ type: 'integer', description: "The thread's revision after the write: every file was written in it." }) revision: number;
}

export class FileTextResponse {
  @ApiProperty({ description: 'The lines asked for, each prefixed with its number (cat -n style).' }) content: string;
}

export class EditResultResponse {
  @ApiProperty() path: string;
  @ApiProperty({ type: 'integer' }) occurrences: number;
}

export class GlobResultResponse {
  @ApiProperty({ type: [String] }) paths: string[];
}

export class GrepMatchResponse {
  @ApiProperty() path: string;
  @ApiProperty({ type: 'integer' }) line: number;
  @ApiProperty() text: string;
}

export class GrepCountResponse {
  @ApiProperty() path: string;
  @ApiProperty({ type: 'integer' }) count: number;
}

export class GrepResultResponse implements GrepResult {
  @ApiProperty({ enum: ['files_with_matches', 'content', 'count'] }) mode: GrepResult['mode'];
  @ApiPropertyOptional({ type: [String], description: 'files_with_matches' }) files?: string[];
  @ApiPropertyOptional({ type: () => [GrepMatchResponse], description: 'content' }) matches?: GrepMatchResponse[];
  @ApiPropertyOptional({ type: () => [GrepCountResponse], description: 'count' }) counts?: GrepCountResponse[];
  @ApiProperty({ description: 'More matched than were returned.' }) truncated: boolean;
  @ApiPropertyOptional() note?: string;
}
