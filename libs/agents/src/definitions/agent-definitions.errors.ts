import { DrydockError } from '@drydock/core';
import type { DeriveSchemaError } from '../python-tools/tool-module.js';

// Refusals of agent definitions. Codes are stable (tests and clients assert them);
// refusals of a bundle itself are AgentBundleError, of a module record PythonToolError.
export class AgentDefinitionError extends DrydockError {
  static notFound(id: string) {
    return new AgentDefinitionError('AGENT_NOT_FOUND', `No agent with id ${id}.`, 404);
  }

  static nameTaken(name: string) {
    return new AgentDefinitionError(
      'AGENT_NAME_TAKEN',
      `This tenant already has an agent named ${JSON.stringify(name)}; choose another name or update that agent.`,
      409,
      { name },
    );
  }

  static invalid(field: string, reason: string) {
    return new AgentDefinitionError('INVALID_AGENT_DEFINITION', `Invalid agent definition: ${field} ${reason}`, 400, { field });
  }

  static unknownTool(tool: string, known: readonly string[]) {
    return new AgentDefinitionError(
      'UNKNOWN_TOOL',
      `${JSON.stringify(tool)} is not a built-in tool; choose from ${known.join(', ')}.`,
      400,
      { tool, known: [...known] },
    );
  }

  static toolNameConflict(fn: string, module: string, other: string) {
    return new AgentDefinitionError(
      'TOOL_NAME_CONFLICT',
      `Function ${JSON.stringify(fn)} of Python module ${JSON.stringify(module)} has the same name as ${other}; ` +
        'tool names must be unique within an agent, so rename it (or start it with "_" to keep it private).',
      422,
      { module, function: fn },
    );
  }

  // What derive_schema.py reported, with its code: PYTHON_SYNTAX_ERROR,
  // PYTHON_VARARGS_NOT_SUPPORTED, ... (one per DERIVE_SCHEMA_ERROR_CODES entry).
  static schemaErrors(module: string, errors: readonly DeriveSchemaError[]) {
    const [first] = errors;
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more problem${errors.length > 2 ? 's' : ''}, listed in details.errors)` : '';
    return new AgentDefinitionError(
      `PYTHON_${first!.code}`,
      `Python module ${JSON.stringify(module)} cannot be used as tools: ${first!.message}${more}`,
      422,
      { module, errors: errors.map((e) => ({ ...e })) },
    );
  }

  static noPublicFunctions(module: string) {
    return new AgentDefinitionError(
      'PYTHON_NO_PUBLIC_FUNCTIONS',
      `Python module ${JSON.stringify(module)} defines no public function at its top level, so it offers no tools; ` +
        'define at least one "def name(...)" whose name does not start with "_".',
      422,
      { module },
    );
  }

  // The sandbox did not give an answer (it timed out, ran out of memory, was killed).
  static derivationFailed(module: string, reason: string) {
    return new AgentDefinitionError(
      'SCHEMA_DERIVATION_FAILED',
      `The tool schemas of Python module ${JSON.stringify(module)} could not be derived in the sandbox: ${reason}`,
      502,
      { module },
    );
  }

  static bundleFunctionMissing(module: string, fn: string) {
    return new AgentDefinitionError(
      'BUNDLE_FUNCTION_MISSING',
      `The bundle lists a tool ${JSON.stringify(fn)} for Python module ${JSON.stringify(module)}, but the module source ` +
        'defines no such top-level function.',
      422,
      { module, function: fn },
    );
  }
}
