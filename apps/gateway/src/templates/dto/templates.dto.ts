import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsObject, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { TEMPLATE_NAME } from '@drydock/templates';

export class CreateTemplateDto {
  @ApiProperty({ pattern: TEMPLATE_NAME.source, example: 'analytics', description: 'A new name makes a template; an existing one of yours gets a new version.' })
  @IsString() @Matches(TEMPLATE_NAME, { message: 'name is lowercase letters, digits, ".", "_" and "-", starting with a letter or digit, at most 63 characters' })
  name: string;

  @ApiProperty({
    example: 'FROM drydock\nRUN apt-get update && apt-get install -y --no-install-recommends sqlite3',
    description: 'Starts FROM drydock (the platform image); see docs/templates.md for what a template may do. At most TEMPLATE_MAX_DOCKERFILE_BYTES.',
  })
  @IsString()
  dockerfile: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { 'requirements.txt': 'tabulate\n' },
    description: 'Text files of the build context, by relative path (COPY them in). At most TEMPLATE_MAX_CONTEXT_FILES, TEMPLATE_MAX_CONTEXT_BYTES in all.',
  })
  @IsOptional() @IsObject()
  files?: Record<string, string>;

  @ApiPropertyOptional({ maxLength: 500 })
  @IsOptional() @IsString() @MaxLength(500)
  description?: string;
}

export class UpdateTemplateDto {
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 20, description: "Started sandboxes of the template's newest ready version each worker keeps." })
  @IsInt() @Min(0) @Max(20)
  poolSize: number;
}

export class TemplateBuildResponse {
  @ApiProperty() name: string;
  @ApiProperty({ type: 'integer' }) version: number;
  @ApiProperty({ enum: ['building'] }) status: 'building';
}

export class TemplateLatestResponse {
  @ApiProperty({ type: 'integer' }) version: number;
  @ApiProperty({ enum: ['building', 'ready', 'failed'] }) status: 'building' | 'ready' | 'failed';
}

export class TemplateSummaryResponse {
  @ApiProperty() name: string;
  @ApiProperty({ description: 'Published by the operators for every tenant.' }) shared: boolean;
  @ApiProperty({ type: 'string', nullable: true }) description: string | null;
  @ApiProperty({ type: 'integer' }) poolSize: number;
  @ApiProperty({ type: () => TemplateLatestResponse, nullable: true, description: 'Its newest version.' }) latest: TemplateLatestResponse | null;
}

export class TemplateListResponse {
  @ApiProperty({ type: () => [TemplateSummaryResponse], description: "Yours, then the shared ones; a name of yours hides a shared one's." })
  templates: TemplateSummaryResponse[];
}

export class TemplateVersionResponse {
  @ApiProperty({ type: 'integer' }) version: number;
  @ApiProperty({ enum: ['building', 'ready', 'failed'] }) status: 'building' | 'ready' | 'failed';
  @ApiProperty({ type: 'string', nullable: true, example: 'sha256:…' }) imageDigest: string | null;
  @ApiProperty({ type: 'integer', nullable: true }) sizeBytes: number | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) finishedAt: string | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'Why it failed: the failing step and the end of its output.' }) error: string | null;
}

export class TemplateResponse {
  @ApiProperty() name: string;
  @ApiProperty() shared: boolean;
  @ApiProperty({ type: 'string', nullable: true }) description: string | null;
  @ApiProperty({ type: 'integer' }) poolSize: number;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: () => [TemplateVersionResponse] }) versions: TemplateVersionResponse[];
}
