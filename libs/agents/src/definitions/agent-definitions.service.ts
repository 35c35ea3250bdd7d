import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, newId, SANDBOX_TIERS, TenantsService, type AppConfig, type SandboxTier } from '@drydock/core';
import { policyWithin } from '@drydock/egress';
import type { SessionNetwork } from '@drydock/execution';
import { SessionsError, SessionsService, type SessionIdleAction } from '@drydock/sessions';
import { backendRoutesSchema, parseBackendRoutes, type BackendRouteConfig, type FilesystemRoots } from '../backends/backend-routes.js';
import { exportAgentBundle, importAgentBundle, portableAgentSchema, type AgentBundle, type PortableAgent } from '../python-tools/agent-bundle.js';
import { PythonToolError } from '../python-tools/python-tools.errors.js';
import {
  createPythonToolModule,
  describeZodError,
  MAX_PYTHON_MODULE_SOURCE_LENGTH,
  PYTHON_MODULE_NAME_PATTERN,
  type PythonToolModule,
  type PythonToolSpec,
} from '../python-tools/tool-module.js';
import {
  AGENT_BUILTIN_TOOLS,
  DEFAULT_AGENT_MODEL,
  MAX_AGENT_INSTRUCTIONS_LENGTH,
  MAX_AGENT_MODEL_LENGTH,
  MAX_AGENT_NAME_LENGTH,
  MAX_AGENT_PYTHON_MODULES,
  toPortableAgent,
  type AgentBuiltinTool,
  type AgentDefinition,
  type AgentDefinitionInput,
  type AgentDefinitionPatch,
  type PythonModuleInput,
} from './agent-definition.js';
import { AgentDefinitionError } from './agent-definitions.errors.js';
import { AGENTS_REPOSITORY, type AgentsRepository, type NewAgent } from './agents.repository.js';
import { PYTHON_SCHEMA_DERIVER, type PythonSchemaDeriver } from './python-schema-deriver.js';
import { TEMPLATE_NAMES, type TemplateNames } from './template-names.js';

type CheckedFields = Omit<NewAgent, 'id' | 'pythonModules' | 'template' | 'network' | 'tier' | 'idleAction'>;

// What a definition's sessions may come to when idle (CreateSessionCommand.idleAction).
const IDLE_ACTIONS: readonly SessionIdleAction[] = ['hibernate', 'end'];

// Agent definitions of a tenant: checked, their Python modules' tool schemas derived in
// the tenant's sandbox, stored, and moved between deployments as hashed bundles. Every
// stored definition is one exportAgentBundle accepts.
@Injectable()
export class AgentDefinitionsService {
  constructor(
    @Inject(AGENTS_REPOSITORY) private readonly agents: AgentsRepository,
    @Inject(PYTHON_SCHEMA_DERIVER) private readonly deriver: PythonSchemaDeriver,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(TEMPLATE_NAMES) private readonly templates: TemplateNames,
    private readonly tenants: TenantsService,
    // Only for the tiers this deployment offers.
    @Inject(SessionsService) private readonly sessions: Pick<SessionsService, 'offeredTiers'>,
  ) {}

  async create(tenantId: string, input: AgentDefinitionInput): Promise<AgentDefinition> {
    const fields = {
      ...this.checkFields(input),
      template: await this.checkTemplate(tenantId, input.template ?? null),
      network: await this.checkNetwork(tenantId, input.network ?? null),
      tier: await this.checkTier(tenantId, input.tier ?? null),
      idleAction: checkIdleAction(input.idleAction ?? null),
    };
    const sources = checkModuleInputs(input.pythonModules ?? []);
    const pythonModules = await this.deriveModules(tenantId, sources);
    return this.agents.create(tenantId, this.checkedAgent({ id: newId('agt'), ...fields, pythonModules }));
  }

  async get(tenantId: string, id: string): Promise<AgentDefinition> {
    const agent = await this.agents.findById(tenantId, id);
    if (!agent) throw AgentDefinitionError.notFound(id);
    return agent;
  }

  list(tenantId: string): Promise<AgentDefinition[]> {
    return this.agents.list(tenantId);
  }

  // Fields left out keep their value; `pythonModules`, when given, replaces the list
  // (a module whose source is unchanged keeps its schemas without a sandbox run).
  async update(tenantId: string, id: string, patch: AgentDefinitionPatch): Promise<AgentDefinition> {
    const current = await this.get(tenantId, id);
    const fields = this.checkFields({
      name: patch.name ?? current.name,
      instructions: patch.instructions ?? current.instructions,
      model: patch.model ?? current.model,
      tools: patch.tools ?? current.tools,
      backendRoutes: patch.backendRoutes ?? current.backendRoutes,
    });
    const template = patch.template === undefined ? current.template : await this.checkTemplate(tenantId, patch.template);
    const network = patch.network === undefined ? current.network : await this.checkNetwork(tenantId, patch.network);
    const tier = patch.tier === undefined ? current.tier : await this.checkTier(tenantId, patch.tier);
    const idleAction = patch.idleAction === undefined ? current.idleAction : checkIdleAction(patch.idleAction);
    const pythonModules = patch.pythonModules
      ? await this.deriveModules(tenantId, checkModuleInputs(patch.pythonModules), current.pythonModules)
      : current.pythonModules;
    const { id: _id, ...changes } = this.checkedAgent({ id, ...fields, template, network, tier, idleAction, pythonModules });
    const updated = await this.agents.update(tenantId, id, changes);
    if (!updated) throw AgentDefinitionError.notFound(id);
    return updated;
  }

  async delete(tenantId: string, id: string): Promise<void> {
    if (!(await this.agents.delete(tenantId, id))) throw AgentDefinitionError.notFound(id);
  }

  async export(tenantId: string, id: string): Promise<AgentBundle> {
    return exportAgentBundle(toPortableAgent(await this.get(tenantId, id)));
  }

  // Verifies the bundle's hashes (AgentBundleError otherwise) and stores its definition
  // as it is: schemas are not derived again, so exporting the copy gives the same agent.
  async import(tenantId: string, bundle: unknown): Promise<AgentDefinition> {
    const agent = importAgentBundle(bundle);
    const fields = this.checkFields(agent);
    if (agent.pythonModules.length > MAX_AGENT_PYTHON_MODULES) {
      throw AgentDefinitionError.invalid('pythonModules', `has ${agent.pythonModules.length} modules; an agent has at most ${MAX_AGENT_PYTHON_MODULES}.`);
    }
    checkFunctionNames(agent.pythonModules);
    for (const module of agent.pythonModules) {
      for (const fn of module.functions) {
        if (!definesFunction(module.source, fn.name)) throw AgentDefinitionError.bundleFunctionMissing(module.name, fn.name);
      }
    }
    // A bundle is portable: its template, network, tier and idle action are this
    // deployment's to set.
    const unset = { template: null, network: null, tier: null, idleAction: null };
    return this.agents.create(tenantId, this.checkedAgent({ id: newId('agt'), ...fields, ...unset, pythonModules: agent.pythonModules }));
  }

  // A template the tenant can use (its own or a shared one), ready or not yet.
  private async checkTemplate(tenantId: string, ref: string | null): Promise<string | null> {
    if (ref === null) return null;
    if (typeof ref !== 'string') throw AgentDefinitionError.invalid('template', 'must be a template name, "name:version", or null.');
    await this.templates.assertVisible(tenantId, ref);
    return ref;
  }

  // A policy within the tenant's ceiling as it is now (422 NETWORK_NOT_ALLOWED naming the
  // entries outside it, 400 INVALID_NETWORK_POLICY for a malformed one), normalized.
  private async checkNetwork(tenantId: string, requested: { allow: readonly unknown[] } | null): Promise<SessionNetwork | null> {
    if (requested === null) return null;
    const tenant = await this.tenants.get(tenantId);
    return policyWithin(tenant.limits.network, requested);
  }

  // A tier this deployment offers (422 TIER_NOT_AVAILABLE) and the tenant allows as its
  // limits are now (422 TIER_NOT_ALLOWED): SessionsService.create's rule, checked here so
  // a definition is refused when it is set rather than on its first tool call.
  private async checkTier(tenantId: string, requested: SandboxTier | null): Promise<SandboxTier | null> {
    if (requested === null) return null;
    if (!(SANDBOX_TIERS as readonly unknown[]).includes(requested)) {
      throw AgentDefinitionError.invalid('tier', `must be one of ${SANDBOX_TIERS.join(', ')}, or null.`);
    }
    const offered = this.sessions.offeredTiers();
    if (!offered.includes(requested)) throw SessionsError.tierNotAvailable(requested);
    const { limits } = await this.tenants.get(tenantId);
    const allowed = limits.tiers?.length ? limits.tiers.filter((t) => offered.includes(t)) : offered;
    if (!allowed.includes(requested)) throw SessionsError.tierNotAllowed(requested, allowed);
    return requested;
  }

  // Name, instructions, model, tools and routes: everything but the modules.
  private checkFields(input: AgentDefinitionInput | PortableAgent): CheckedFields {
    const name = checkText('name', input.name, MAX_AGENT_NAME_LENGTH, { required: true });
    const instructions = checkText('instructions', input.instructions ?? '', MAX_AGENT_INSTRUCTIONS_LENGTH);
    const model = checkText('model', input.model ?? DEFAULT_AGENT_MODEL, MAX_AGENT_MODEL_LENGTH, { required: true });
    const tools = checkTools(input.tools ?? [...AGENT_BUILTIN_TOOLS]);
    const backendRoutes = this.checkRoutes(input.backendRoutes ?? []);
    return { name, instructions, model, tools, backendRoutes };
  }

  // Stored as given (parseBackendRoutes would add the implicit "/" route); filesystem
  // roots must be ones this deployment configured.
  private checkRoutes(input: unknown): BackendRouteConfig[] {
    parseBackendRoutes(input, { filesystemRoots: this.filesystemRoots() });
    return backendRoutesSchema.parse(input);
  }

  private filesystemRoots(): FilesystemRoots {
    const roots: Record<string, string> = this.config.agent.filesystemRoots;
    return Object.fromEntries(Object.entries(roots).map(([name, rootDir]) => [name, { rootDir }]));
  }

  private async deriveModules(
    tenantId: string,
    inputs: PythonModuleInput[],
    previous: readonly PythonToolModule[] = [],
  ): Promise<PythonToolModule[]> {
    const modules: PythonToolModule[] = [];
    for (const { name, source } of inputs) {
      const unchanged = previous.find((m) => m.source === source);
      const functions = unchanged ? unchanged.functions : await this.deriveFunctions(tenantId, name, source);
      modules.push(createPythonToolModule({ name, source, functions }));
      // Checked as each module arrives, so a conflict is reported before more sandbox runs.
      checkFunctionNames(modules);
    }
    return modules;
  }

  private async deriveFunctions(tenantId: string, module: string, source: string): Promise<PythonToolSpec[]> {
    const derived = await this.deriver.derive(tenantId, module, source);
    if (derived.errors.length > 0) throw AgentDefinitionError.schemaErrors(module, derived.errors);
    if (derived.functions.length === 0) throw AgentDefinitionError.noPublicFunctions(module);
    return derived.functions;
  }

  // The stored shape is always an exportable one.
  private checkedAgent(agent: NewAgent): NewAgent {
    const parsed = portableAgentSchema.safeParse(toPortableAgent({ ...agent, tenantId: '', createdAt: new Date(), updatedAt: new Date() }));
    if (!parsed.success) throw AgentDefinitionError.invalid('definition', describeZodError(parsed.error));
    return agent;
  }
}

// hibernate or end, or null (the deployment's SESSION_IDLE_ACTION): any tier may take
// either (a session that cannot hibernate ends), so there is nothing else to check.
function checkIdleAction(requested: unknown): SessionIdleAction | null {
  if (requested === null) return null;
  if (!(IDLE_ACTIONS as readonly unknown[]).includes(requested)) {
    throw AgentDefinitionError.invalid('idleAction', `must be one of ${IDLE_ACTIONS.join(', ')}, or null.`);
  }
  return requested as SessionIdleAction;
}

function checkText(field: string, value: unknown, max: number, options: { required?: boolean } = {}): string {
  if (typeof value !== 'string') throw AgentDefinitionError.invalid(field, 'must be a string.');
  if (options.required && value.trim().length === 0) throw AgentDefinitionError.invalid(field, 'must not be blank.');
  if (value.length > max) throw AgentDefinitionError.invalid(field, `is ${value.length} characters long; the limit is ${max}.`);
  return value;
}

function checkTools(input: unknown): AgentBuiltinTool[] {
  if (!Array.isArray(input)) throw AgentDefinitionError.invalid('tools', 'must be a list of built-in tool names.');
  const seen = new Set<string>();
  for (const tool of input) {
    if (typeof tool !== 'string' || !(AGENT_BUILTIN_TOOLS as readonly string[]).includes(tool)) {
      throw AgentDefinitionError.unknownTool(String(tool), AGENT_BUILTIN_TOOLS);
    }
    if (seen.has(tool)) throw AgentDefinitionError.invalid('tools', `lists ${tool} twice.`);
    seen.add(tool);
  }
  return input as AgentBuiltinTool[];
}

// Cheap checks before any sandbox run.
function checkModuleInputs(input: unknown): PythonModuleInput[] {
  if (!Array.isArray(input)) throw AgentDefinitionError.invalid('pythonModules', 'must be a list of {name, source}.');
  if (input.length > MAX_AGENT_PYTHON_MODULES) {
    throw AgentDefinitionError.invalid('pythonModules', `has ${input.length} modules; an agent has at most ${MAX_AGENT_PYTHON_MODULES}.`);
  }
  const names = new Set<string>();
  return input.map((module: Partial<PythonModuleInput> | null, i) => {
    const { name, source } = module ?? {};
    if (typeof name !== 'string' || !PYTHON_MODULE_NAME_PATTERN.test(name)) {
      throw PythonToolError.invalidModule(`pythonModules.${i}.name must be a Python identifier of at most 64 ASCII characters.`);
    }
    if (names.has(name)) throw AgentDefinitionError.invalid('pythonModules', `names module ${name} twice.`);
    names.add(name);
    if (typeof source !== 'string') throw PythonToolError.invalidModule(`the source of ${name} must be a string.`);
    if (source.length > MAX_PYTHON_MODULE_SOURCE_LENGTH) {
      throw PythonToolError.invalidModule(`the source of ${name} is over ${MAX_PYTHON_MODULE_SOURCE_LENGTH} characters.`);
    }
    return { name, source };
  });
}

// A tool name is unique within the agent: no two functions, and no function named like
// a built-in tool (selected or not: selections change, stored functions do not).
function checkFunctionNames(modules: readonly PythonToolModule[]): void {
  const owners = new Map<string, string>();
  for (const module of modules) {
    for (const fn of module.functions) {
      if ((AGENT_BUILTIN_TOOLS as readonly string[]).includes(fn.name)) {
        throw AgentDefinitionError.toolNameConflict(fn.name, module.name, 'a built-in tool');
      }
      const owner = owners.get(fn.name);
      if (owner !== undefined) throw AgentDefinitionError.toolNameConflict(fn.name, module.name, `a function of module ${JSON.stringify(owner)}`);
      owners.set(fn.name, module.name);
    }
  }
}

// A `def` or `async def` of that name at the start of a line: a sanity check of an
// imported bundle, not a parse (the call runner reports a missing function anyway).
function definesFunction(source: string, name: string): boolean {
  return new RegExp(`^(?:async[ \\t]+)?def[ \\t]+${name}[ \\t]*[(\\[]`, 'm').test(source);
}
