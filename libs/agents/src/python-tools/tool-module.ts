import { createHash } from 'node:crypto';
import { z } from 'zod';
import { PythonToolError } from './python-tools.errors.js';

// A user-defined Python tool module as Drydock stores it: the whole source (helpers and
// imports included, so the functions work as written), its SHA-256 and the schemas
// derived from it by derive_schema.py. The shapes here are also what that script prints,
// checked with zod because the sandbox that runs it is reachable by tenant code.

// Model providers accept tool names of ASCII letters, digits, '_' and '-', at most 64;
// public Python functions cannot start with '_'.
export const PYTHON_TOOL_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
export const PYTHON_MODULE_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
export const SHA256_HEX_PATTERN = /^[0-9a-f]{64}$/;
export const MAX_PYTHON_MODULE_SOURCE_LENGTH = 512 * 1024;
export const MAX_TOOL_DESCRIPTION_LENGTH = 4096;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const DERIVE_SCHEMA_ERROR_CODES = [
  'INVALID_INPUT',
  'SYNTAX_ERROR',
  'INVALID_TOOL_NAME',
  'POSITIONAL_ONLY_NOT_SUPPORTED',
  'VARARGS_NOT_SUPPORTED',
  'UNSUPPORTED_SIGNATURE',
] as const;

// One parameter's JSON Schema: any JSON object ({} accepts anything).
const propertySchema = z.record(z.string(), z.json());

export const pythonToolParametersSchema = z.strictObject({
  type: z.literal('object'),
  properties: z.record(z.string(), propertySchema),
  required: z.array(z.string()),
  additionalProperties: z.literal(false),
});

export const pythonToolSpecSchema = z
  .strictObject({
    name: z.string().regex(PYTHON_TOOL_NAME_PATTERN, 'must be a public Python function name of at most 64 ASCII characters'),
    description: z.string().max(MAX_TOOL_DESCRIPTION_LENGTH),
    parameters: pythonToolParametersSchema,
    // Repeats parameters.required, for callers that do not read JSON Schema.
    required: z.array(z.string()),
  })
  .superRefine((spec, ctx) => {
    const declared = spec.parameters.required;
    if (declared.length !== spec.required.length || declared.some((name, i) => spec.required[i] !== name)) {
      ctx.addIssue({ code: 'custom', path: ['required'], message: 'must equal parameters.required' });
    }
    for (const name of declared) {
      if (!Object.hasOwn(spec.parameters.properties, name)) {
        ctx.addIssue({ code: 'custom', path: ['required'], message: `names ${name}, which is not a parameter` });
      }
    }
  });

export type PythonToolSpec = z.infer<typeof pythonToolSpecSchema>;

export const pythonToolModuleSchema = z
  .strictObject({
    name: z.string().regex(PYTHON_MODULE_NAME_PATTERN, 'must be a Python identifier of at most 64 ASCII characters'),
    source: z
      .string()
      .max(MAX_PYTHON_MODULE_SOURCE_LENGTH)
      .refine((source) => !LONE_SURROGATE.test(source), 'must be well-formed Unicode text'),
    sha256: z.string().regex(SHA256_HEX_PATTERN, 'must be 64 lowercase hex digits'),
    functions: z.array(pythonToolSpecSchema),
  })
  .superRefine((module, ctx) => {
    const seen = new Set<string>();
    module.functions.forEach((fn, i) => {
      if (seen.has(fn.name)) {
        ctx.addIssue({ code: 'custom', path: ['functions', i, 'name'], message: `${fn.name} is listed twice` });
      }
      seen.add(fn.name);
    });
  });

export type PythonToolModule = z.infer<typeof pythonToolModuleSchema>;

export const deriveSchemaErrorSchema = z.strictObject({
  code: z.enum(DERIVE_SCHEMA_ERROR_CODES),
  function: z.string().nullable(),
  line: z.number().int().nullable(),
  message: z.string(),
});

export type DeriveSchemaError = z.infer<typeof deriveSchemaErrorSchema>;

export const derivedSchemasSchema = z.strictObject({
  functions: z.array(pythonToolSpecSchema),
  errors: z.array(deriveSchemaErrorSchema),
});

export type DerivedSchemas = z.infer<typeof derivedSchemasSchema>;

// SHA-256 (hex) of the module source's UTF-8 bytes: the same digest Python's
// hashlib.sha256(source.encode()) gives, so either side can check the other.
export function sha256OfSource(source: string): string {
  return createHash('sha256').update(source, 'utf8').digest('hex');
}

export function createPythonToolModule(input: {
  name: string;
  source: string;
  functions: readonly PythonToolSpec[];
}): PythonToolModule {
  return parsePythonToolModule({ ...input, functions: [...input.functions], sha256: sha256OfSource(input.source) });
}

// Validates a stored or received module record and checks its hash against its source.
export function parsePythonToolModule(input: unknown): PythonToolModule {
  const parsed = pythonToolModuleSchema.safeParse(input);
  if (!parsed.success) throw PythonToolError.invalidModule(describeZodError(parsed.error));
  if (sha256OfSource(parsed.data.source) !== parsed.data.sha256) {
    throw PythonToolError.moduleHashMismatch(parsed.data.name);
  }
  return parsed.data;
}

// Reads what derive_schema.py printed (stdout, or the REPL cell's value).
export function parseDerivedSchemas(text: string): DerivedSchemas {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw PythonToolError.invalidOutput('schema derivation result', `not JSON (${(error as Error).message}).`);
  }
  const parsed = derivedSchemasSchema.safeParse(json);
  if (!parsed.success) {
    throw PythonToolError.invalidOutput('schema derivation result', describeZodError(parsed.error));
  }
  return parsed.data;
}

// "functions.0.name: must be ..." for the first issue: enough to find the problem.
export function describeZodError(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid.';
  const where = issue.path.length ? `${issue.path.map(String).join('.')}: ` : '';
  return `${where}${issue.message}.`;
}
