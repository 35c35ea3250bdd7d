import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { jsonValueCell, pythonStringLiteral } from './python-literal.js';
import { PythonToolError } from './python-tools.errors.js';

// derive_schema.py is the one source of truth for schema derivation: a plain Python file
// with its own unittest suite, readable and runnable on its own. The code here only
// finds and reads it: beside the compiled module (`npm run build` copies it into dist/),
// else in the source tree, five levels up from dist/libs/agents/src/python-tools/.
export const DERIVE_SCHEMA_SCRIPT_NAME = 'derive_schema.py';

const CANDIDATES = [
  new URL(`./${DERIVE_SCHEMA_SCRIPT_NAME}`, import.meta.url),
  new URL(`../../../../../libs/agents/src/python-tools/${DERIVE_SCHEMA_SCRIPT_NAME}`, import.meta.url),
];

export function deriveSchemaScriptPath(): string {
  const paths = CANDIDATES.map((url) => fileURLToPath(url));
  const found = paths.find((path) => existsSync(path));
  if (!found) throw PythonToolError.scriptMissing(paths);
  return found;
}

let cachedScript: string | undefined;

// The script text, read once. Run it as `python3 derive_schema.py` with
// {"source": ...} on stdin, or send buildDeriveSchemaCode() to a REPL.
export function readDeriveSchemaScript(): string {
  cachedScript ??= readFileSync(deriveSchemaScriptPath(), 'utf8');
  return cachedScript;
}

// A REPL cell whose value is derive(source) as JSON text; read it with
// parseDerivedSchemas(). The script is exec'd into a private dict, never into the REPL's
// namespace, and the tenant module is only parsed, never run.
export function buildDeriveSchemaCode(source: string): string {
  const body = [
    'import json',
    'namespace = {"__name__": "drydock_derive_schema"}',
    `script = ${pythonStringLiteral(readDeriveSchemaScript())}`,
    'exec(compile(script, "<drydock derive_schema.py>", "exec", dont_inherit=True), namespace)',
    `return JsonText(json.dumps(namespace["derive"](${pythonStringLiteral(source)})))`,
  ].join('\n');
  return jsonValueCell('_drydock_derive_schema', 'Drydock: derive tool schemas from a Python module (parsed, not run).', body);
}
