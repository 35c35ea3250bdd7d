import { createHash } from 'node:crypto';
import { z } from 'zod';
import { backendRoutesSchema } from '../backends/backend-routes.js';
import { canonicalJson } from './canonical-json.js';
import { AgentBundleError } from './python-tools.errors.js';
import { describeZodError, pythonToolModuleSchema, SHA256_HEX_PATTERN, sha256OfSource } from './tool-module.js';

// Agent definitions leave and enter Drydock as bundles (GET /v1/agents/:id/export,
// POST /v1/agents/import):
//   {format: 'drydock.agent-bundle', version: 1, agent: {...}, sha256}
// `sha256` is over the canonical JSON of `agent` (sorted keys, no whitespace), and each
// Python module carries the SHA-256 of its source. Import checks both and refuses a
// bundle changed after export. The hashes detect corruption and edits, not authorship:
// anyone can recompute them, so imported Python is still only ever run in a sandbox.
// The function schemas in a bundle only describe the tools to the model; import keeps
// them as they are (re-exports stay byte-identical) after checking that each function
// it names is defined at the top level of its module.

export const AGENT_BUNDLE_FORMAT = 'drydock.agent-bundle';
export const AGENT_BUNDLE_VERSION = 1;

const notBlank = (text: string) => text.trim().length > 0;

// No transforms anywhere below: what is validated is exactly what was hashed.
export const portableAgentSchema = z
  .strictObject({
    name: z.string().max(200).refine(notBlank, 'must not be blank'),
    instructions: z.string().max(200_000),
    model: z.string().max(200).refine(notBlank, 'must not be blank'),
    tools: z.array(z.string().min(1).max(64)),
    // The same route rules as a stored definition (backends/backend-routes.ts), so a
    // filesystem route keeps its configured root name through export and import.
    backendRoutes: backendRoutesSchema,
    pythonModules: z.array(pythonToolModuleSchema),
  })
  .superRefine((agent, ctx) => {
    const duplicate = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message });
    const tools = new Set<string>();
    agent.tools.forEach((tool, i) => {
      if (tools.has(tool)) duplicate(['tools', i], `${tool} is listed twice`);
      tools.add(tool);
    });
    // Tool names are global to the agent: a Python function cannot share its name with
    // another module's function or with a built-in tool.
    const modules = new Set<string>();
    const functions = new Map<string, string>();
    agent.pythonModules.forEach((module, i) => {
      if (modules.has(module.name)) duplicate(['pythonModules', i, 'name'], `module ${module.name} appears twice`);
      modules.add(module.name);
      module.functions.forEach((fn, j) => {
        const path = ['pythonModules', i, 'functions', j, 'name'];
        const owner = functions.get(fn.name);
        if (owner !== undefined) duplicate(path, `function ${fn.name} is defined by both ${owner} and ${module.name}`);
        else if (tools.has(fn.name)) duplicate(path, `function ${fn.name} has the name of a built-in tool`);
        functions.set(fn.name, module.name);
      });
    });
  });

export type PortableAgent = z.infer<typeof portableAgentSchema>;

export const agentBundleSchema = z.strictObject({
  format: z.literal(AGENT_BUNDLE_FORMAT),
  version: z.literal(AGENT_BUNDLE_VERSION),
  agent: portableAgentSchema,
  sha256: z.string().regex(SHA256_HEX_PATTERN, 'must be 64 lowercase hex digits'),
});

export type AgentBundle = z.infer<typeof agentBundleSchema>;

export function agentBundleHash(agent: PortableAgent): string {
  return createHash('sha256').update(canonicalJson(agent), 'utf8').digest('hex');
}

export function exportAgentBundle(agent: PortableAgent): AgentBundle {
  const parsed = portableAgentSchema.safeParse(agent);
  if (!parsed.success) {
    throw AgentBundleError.invalid(`the agent definition cannot be exported: ${describeZodError(parsed.error)}`);
  }
  verifyModuleHashes(parsed.data);
  return {
    format: AGENT_BUNDLE_FORMAT,
    version: AGENT_BUNDLE_VERSION,
    agent: parsed.data,
    sha256: agentBundleHash(parsed.data),
  };
}

// Indented for people reading or diffing a bundle; the hash does not depend on layout.
export function serializeAgentBundle(bundle: AgentBundle): string {
  return `${JSON.stringify(bundle, null, 2)}\n`;
}

// Checks a bundle (the parsed JSON body) and returns the agent definition it carries.
export function importAgentBundle(input: unknown): PortableAgent {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw AgentBundleError.invalid('expected a JSON object.');
  }
  const { format, version } = input as Record<string, unknown>;
  if (format !== AGENT_BUNDLE_FORMAT) {
    throw AgentBundleError.invalid(`its format is ${JSON.stringify(format) ?? 'missing'}, not "${AGENT_BUNDLE_FORMAT}".`);
  }
  if (version !== AGENT_BUNDLE_VERSION) throw AgentBundleError.unsupportedVersion(version);
  const parsed = agentBundleSchema.safeParse(input);
  if (!parsed.success) throw AgentBundleError.invalid(describeZodError(parsed.error));
  // Module hashes first: they name the module that changed.
  verifyModuleHashes(parsed.data.agent);
  if (agentBundleHash(parsed.data.agent) !== parsed.data.sha256) throw AgentBundleError.hashMismatch();
  return parsed.data.agent;
}

// The same, from the bundle file's text.
export function importAgentBundleText(text: string): PortableAgent {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw AgentBundleError.invalid(`it is not JSON (${(error as Error).message}).`);
  }
  return importAgentBundle(json);
}

function verifyModuleHashes(agent: PortableAgent): void {
  for (const module of agent.pythonModules) {
    if (sha256OfSource(module.source) !== module.sha256) throw AgentBundleError.moduleHashMismatch(module.name);
  }
}
