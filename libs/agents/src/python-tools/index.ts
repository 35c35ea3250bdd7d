// User-defined Python tools: schema derivation (derive_schema.py, run in a sandbox), the
// stored module record, the REPL code that calls a tool, and agent bundles.
export { AgentBundleError, PythonToolError } from './python-tools.errors.js';
export { canonicalJson } from './canonical-json.js';
export { pythonStringLiteral } from './python-literal.js';
export {
  createPythonToolModule,
  DERIVE_SCHEMA_ERROR_CODES,
  derivedSchemasSchema,
  MAX_PYTHON_MODULE_SOURCE_LENGTH,
  parseDerivedSchemas,
  parsePythonToolModule,
  PYTHON_MODULE_NAME_PATTERN,
  PYTHON_TOOL_NAME_PATTERN,
  pythonToolModuleSchema,
  pythonToolSpecSchema,
  sha256OfSource,
  type DerivedSchemas,
  type DeriveSchemaError,
  type PythonToolModule,
  type PythonToolSpec,
} from './tool-module.js';
export {
  buildDeriveSchemaCode,
  DERIVE_SCHEMA_SCRIPT_NAME,
  deriveSchemaScriptPath,
  readDeriveSchemaScript,
} from './derive-schema-script.js';
export {
  buildPythonToolCallCode,
  parsePythonToolCallOutput,
  PYTHON_TOOL_CALL_STAGES,
  type PythonToolCall,
  type PythonToolCallOutcome,
  type PythonToolCallStage,
} from './call-snippet.js';
export {
  AGENT_BUNDLE_FORMAT,
  AGENT_BUNDLE_VERSION,
  agentBundleHash,
  agentBundleSchema,
  exportAgentBundle,
  importAgentBundle,
  importAgentBundleText,
  portableAgentSchema,
  serializeAgentBundle,
  type AgentBundle,
  type PortableAgent,
} from './agent-bundle.js';
export {
  createAgentPythonTools,
  createPythonFunctionTool,
  type PythonFunctionToolArtifact,
  type PythonFunctionToolOptions,
  type PythonFunctionToolResult,
} from './python-function-tool.js';
