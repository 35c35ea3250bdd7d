import type { DerivedSchemas } from '../python-tools/tool-module.js';

// Derives the tool schemas of one Python module's source. Tenant code never runs in the
// gateway: the implementation (SessionPythonSchemaDeriver) runs derive_schema.py in a
// sandbox of the tenant and reads its output as untrusted input.
export interface PythonSchemaDeriver {
  // `module` names the module in error messages. Throws AgentDefinitionError
  // SCHEMA_DERIVATION_FAILED when the sandbox gives no answer, PythonToolError
  // INVALID_SANDBOX_OUTPUT when its answer is not the script's.
  derive(tenantId: string, module: string, source: string): Promise<DerivedSchemas>;
}

export const PYTHON_SCHEMA_DERIVER = Symbol('PYTHON_SCHEMA_DERIVER');
