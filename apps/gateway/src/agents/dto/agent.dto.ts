import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsObject, IsOptional, IsString, MaxLength, ValidateNested } from 'class-validator';
import { SANDBOX_TIERS, type SandboxTier } from '@drydock/core';
import {
  AGENT_BUILTIN_TOOLS,
  BACKEND_KINDS,
  MAX_AGENT_INSTRUCTIONS_LENGTH,
  MAX_AGENT_MODEL_LENGTH,
  MAX_AGENT_NAME_LENGTH,
  MAX_AGENT_PYTHON_MODULES,
  MAX_PYTHON_MODULE_SOURCE_LENGTH,
  PYTHON_MODULE_NAME_PATTERN,
} from '@drydock/agents';
import { NetworkOption } from '../../http/network-option.js';

// Shapes only: the rules (known tools, route layout, module names, what a module's
// functions look like) are AgentDefinitionsService's, with their own error codes.

// One route of `backendRoutes`, for the OpenAPI document only: the list is checked in full
// by parseBackendRoutes (400 INVALID_BACKEND_CONFIG), not by class-validator.
export class BackendRouteDto {
  @ApiProperty({ maxLength: 1024, example: '/memories/', description: 'A normalised absolute folder path that starts and ends with "/".' })
  prefix: string;

  @ApiProperty({ enum: BACKEND_KINDS, example: 'tenant-store' })
  backend: (typeof BACKEND_KINDS)[number];

  @ApiPropertyOptional({
    pattern: '^[a-z0-9][a-z0-9_-]{0,63}$',
    example: 'datasets',
    description: "Only for backend filesystem, and required there: one of the operator's AGENT_FILESYSTEM_ROOTS, by name.",
  })
  root?: string;
}

export class PythonModuleDto {
  @ApiProperty({
    maxLength: 64,
    pattern: PYTHON_MODULE_NAME_PATTERN.source,
    example: 'sales_tools',
    description: 'A Python identifier (otherwise 400 INVALID_TOOL_MODULE).',
  })
  @IsString() @MaxLength(64)
  name: string;

  @ApiProperty({
    maxLength: MAX_PYTHON_MODULE_SOURCE_LENGTH,
    description: 'The whole module source; every public top-level def (name not starting with "_") becomes a tool.',
  })
  @IsString() @MaxLength(MAX_PYTHON_MODULE_SOURCE_LENGTH)
  source: string;
}

// Everything but the name, which is required on create and optional on update
// (class-validator merges a parent's rules into a subclass, so @IsOptional cannot be
// taken back there).
class AgentFieldsDto {
  @ApiPropertyOptional({ maxLength: MAX_AGENT_INSTRUCTIONS_LENGTH, default: '', description: "The agent's system instructions." })
  @IsOptional() @IsString() @MaxLength(MAX_AGENT_INSTRUCTIONS_LENGTH)
  instructions?: string;

  // "default": the deployment's configured model.
  @ApiPropertyOptional({ maxLength: MAX_AGENT_MODEL_LENGTH, default: 'default', description: '"default" is the deployment\'s AGENT_MODEL; otherwise a model name the endpoint knows.' })
  @IsOptional() @IsString() @MaxLength(MAX_AGENT_MODEL_LENGTH)
  model?: string;

  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'string', enum: [...AGENT_BUILTIN_TOOLS] },
    maxItems: 32,
    description: 'Built-in tools, each at most once (another name is 400 UNKNOWN_TOOL). Default: all of them.',
  })
  @IsOptional() @IsArray() @ArrayMaxSize(32) @IsString({ each: true })
  tools?: string[];

  // Checked in full by parseBackendRoutes (discriminated by `backend`).
  @ApiPropertyOptional({
    type: () => [BackendRouteDto],
    maxItems: 16,
    description: 'Which backend serves which folder prefix. Default [] (everything in the thread\'s files).',
  })
  @IsOptional() @IsArray() @ArrayMaxSize(16) @IsObject({ each: true })
  backendRoutes?: Record<string, unknown>[];

  @ApiPropertyOptional({
    type: () => [PythonModuleDto],
    maxItems: MAX_AGENT_PYTHON_MODULES,
    description: 'Python tool modules (on update, the whole list is replaced). Default [].',
  })
  @IsOptional() @IsArray() @ArrayMaxSize(MAX_AGENT_PYTHON_MODULES) @ValidateNested({ each: true }) @Type(() => PythonModuleDto)
  pythonModules?: PythonModuleDto[];

  @ApiPropertyOptional({
    type: 'string',
    nullable: true,
    maxLength: 80,
    example: 'analytics',
    description: 'A template ("name" or "name:version") the sessions of its threads start from; null: the platform image. 404 TEMPLATE_NOT_FOUND.',
  })
  @IsOptional() @IsString() @MaxLength(80)
  template?: string | null;

  @NetworkOption(
    'The hosts the code of its threads\' sessions may reach, within the tenant\'s ceiling (docs/network.md): {"allow": ["pypi.org"]}. ' +
      'false or null: no network (the default; on update, removes the policy). 403 NETWORK_FORBIDDEN for true, 422 NETWORK_NOT_ALLOWED names entries ' +
      'outside the ceiling, 400 INVALID_NETWORK_POLICY a malformed one.',
  )
  network?: unknown;

  // null passes @IsOptional: on update it clears the tier.
  @ApiPropertyOptional({
    enum: SANDBOX_TIERS,
    nullable: true,
    description:
      "The isolation tier of its threads' sessions (docs/sessions.md); null: the tenant's default tier (the default; on update, clears it). " +
      '422 TIER_NOT_AVAILABLE for a tier this deployment does not offer, TIER_NOT_ALLOWED for one the tenant may not use.',
  })
  @IsOptional() @IsIn(SANDBOX_TIERS)
  tier?: SandboxTier | null;

  // null passes @IsOptional: on update it clears the idle action.
  @ApiPropertyOptional({
    enum: ['hibernate', 'end'],
    nullable: true,
    description:
      "What its threads' sessions come to when idle (docs/sessions.md): hibernate (a gvisor session, after SESSION_HIBERNATE_AFTER_MS; others end) " +
      "or end (after SESSION_IDLE_TIMEOUT_MS). null: the deployment's SESSION_IDLE_ACTION (the default; on update, clears it).",
  })
  @IsOptional() @IsIn(['hibernate', 'end'])
  idleAction?: 'hibernate' | 'end' | null;
}

export class CreateAgentDto extends AgentFieldsDto {
  @ApiProperty({ maxLength: MAX_AGENT_NAME_LENGTH, description: 'Unique within the tenant; not blank.' })
  @IsString() @MaxLength(MAX_AGENT_NAME_LENGTH)
  name: string;
}

export class UpdateAgentDto extends AgentFieldsDto {
  @ApiPropertyOptional({ maxLength: MAX_AGENT_NAME_LENGTH, description: 'Unique within the tenant; not blank.' })
  @IsOptional() @IsString() @MaxLength(MAX_AGENT_NAME_LENGTH)
  name?: string;
}
