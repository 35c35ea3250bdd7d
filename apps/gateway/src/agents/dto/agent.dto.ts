import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsObject, IsOptional, IsString, MaxLength, ValidateNested } from 'class-validator';
import {
  MAX_AGENT_INSTRUCTIONS_LENGTH,
  MAX_AGENT_MODEL_LENGTH,
  MAX_AGENT_NAME_LENGTH,
  MAX_AGENT_PYTHON_MODULES,
  MAX_PYTHON_MODULE_SOURCE_LENGTH,
} from '@drydock/agents';

// Shapes only: the rules (known tools, route layout, module names, what a module's
// functions look like) are AgentDefinitionsService's, with their own error codes.

export class PythonModuleDto {
  @IsString() @MaxLength(64)
  name: string;

  @IsString() @MaxLength(MAX_PYTHON_MODULE_SOURCE_LENGTH)
  source: string;
}

// Everything but the name, which is required on create and optional on update
// (class-validator merges a parent's rules into a subclass, so @IsOptional cannot be
// taken back there).
class AgentFieldsDto {
  @IsOptional() @IsString() @MaxLength(MAX_AGENT_INSTRUCTIONS_LENGTH)
  instructions?: string;

  // "default": the deployment's configured model.
  @IsOptional() @IsString() @MaxLength(MAX_AGENT_MODEL_LENGTH)
  model?: string;

  @IsOptional() @IsArray() @ArrayMaxSize(32) @IsString({ each: true })
  tools?: string[];

  // Checked in full by parseBackendRoutes (discriminated by `backend`).
  @IsOptional() @IsArray() @ArrayMaxSize(16) @IsObject({ each: true })
  backendRoutes?: Record<string, unknown>[];

  @IsOptional() @IsArray() @ArrayMaxSize(MAX_AGENT_PYTHON_MODULES) @ValidateNested({ each: true }) @Type(() => PythonModuleDto)
  pythonModules?: PythonModuleDto[];
}

export class CreateAgentDto extends AgentFieldsDto {
  @IsString() @MaxLength(MAX_AGENT_NAME_LENGTH)
  name: string;
}

export class UpdateAgentDto extends AgentFieldsDto {
  @IsOptional() @IsString() @MaxLength(MAX_AGENT_NAME_LENGTH)
  name?: string;
}
