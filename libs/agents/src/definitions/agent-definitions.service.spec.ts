import { DrydockError, type TenantsService } from '@drydock/core';
import { makeConfig } from '../../../../test/factories/config.factory.js';
import { exportAgentBundle, serializeAgentBundle, type AgentBundle } from '../python-tools/agent-bundle.js';
import { buildDeriveSchemaCode } from '../python-tools/derive-schema-script.js';
import { runReplCellJson } from '../python-tools/repl-harness.spec-helper.js';
import { parseDerivedSchemas, sha256OfSource, type DerivedSchemas } from '../python-tools/tool-module.js';
import { AGENT_BUILTIN_TOOLS, type AgentDefinition } from './agent-definition.js';
import { AgentDefinitionError } from './agent-definitions.errors.js';
import { AgentDefinitionsService } from './agent-definitions.service.js';
import type { AgentChanges, AgentRecord, AgentsRepository, NewAgent } from './agents.repository.js';
import type { SandboxTier } from '@drydock/core';
import type { SessionsService } from '@drydock/sessions';
import type { PythonSchemaDeriver } from './python-schema-deriver.js';
import type { TemplateNames } from './template-names.js';

const STATS_SOURCE = `import statistics

def _clean(values):
    return [float(v) for v in values if v is not None]

def spread(values: list[float], ddof: int = 1) -> dict:
    """Mean and standard deviation of some numbers.

    Args:
        values: The numbers; None entries are skipped.
        ddof: 1 for the sample deviation, 0 for the population's.
    """
    data = _clean(values)
    stdev = statistics.stdev(data) if ddof else statistics.pstdev(data)
    return {"mean": statistics.mean(data), "stdev": stdev}
`;

class InMemoryAgentsRepository implements AgentsRepository {
  readonly rows: AgentRecord[] = [];

  async create(tenantId: string, agent: NewAgent): Promise<AgentRecord> {
    this.assertFree(tenantId, agent.name);
    const now = new Date();
    const record = structuredClone({ ...agent, tenantId, createdAt: now, updatedAt: now });
    this.rows.push(record);
    return structuredClone(record);
  }
  async findById(tenantId: string, id: string) {
    const row = this.rows.find((r) => r.tenantId === tenantId && r.id === id);
    return row ? structuredClone(row) : null;
  }
  async list(tenantId: string) {
    return structuredClone(this.rows.filter((r) => r.tenantId === tenantId));
  }
  async update(tenantId: string, id: string, changes: AgentChanges) {
    const row = this.rows.find((r) => r.tenantId === tenantId && r.id === id);
    if (!row) return null;
    if (changes.name !== undefined && changes.name !== row.name) this.assertFree(tenantId, changes.name);
    Object.assign(row, structuredClone(changes), { updatedAt: new Date() });
    return structuredClone(row);
  }
  async delete(tenantId: string, id: string) {
    const at = this.rows.findIndex((r) => r.tenantId === tenantId && r.id === id);
    if (at >= 0) this.rows.splice(at, 1);
    return at >= 0;
  }
  private assertFree(tenantId: string, name: string) {
    if (this.rows.some((r) => r.tenantId === tenantId && r.name === name)) throw AgentDefinitionError.nameTaken(name);
  }
}

// Runs the real derive_schema.py with a local python3, as the sandbox would.
class LocalDeriver implements PythonSchemaDeriver {
  readonly calls: { tenantId: string; module: string; source: string }[] = [];
  async derive(tenantId: string, module: string, source: string): Promise<DerivedSchemas> {
    this.calls.push({ tenantId, module, source });
    return parseDerivedSchemas(JSON.stringify(runReplCellJson(buildDeriveSchemaCode(source))));
  }
}

// The templates a tenant can name: "analytics" of ten_a only.
const templates: TemplateNames = {
  async assertVisible(tenantId, ref) {
    if (!(tenantId === 'ten_a' && ref.split(':')[0] === 'analytics')) {
      throw new DrydockError('TEMPLATE_NOT_FOUND', `No template "${ref}".`, 404);
    }
  },
};

// The tenants' network ceilings: ten_a may reach pypi.org and *.example.com; ten_b nothing.
// Their tiers: ten_a any offered one; ten_b runc only.
const tenants: Pick<TenantsService, 'get'> = {
  get: async (id) => ({ id, limits: id === 'ten_a' ? { network: { allow: ['pypi.org', '*.example.com'] } } : { tiers: ['runc'] } }) as never,
};

// The tiers the deployment offers: runc and gvisor unless told otherwise.
function setup(env: Record<string, string> = {}, offered: SandboxTier[] = ['runc', 'gvisor']) {
  const repo = new InMemoryAgentsRepository();
  const deriver = new LocalDeriver();
  const sessions: Pick<SessionsService, 'offeredTiers'> = { offeredTiers: () => [...offered] };
  const sut = new AgentDefinitionsService(repo, deriver, makeConfig(env), templates, tenants as TenantsService, sessions);
  return { sut, repo, deriver };
}

async function refusal(promise: Promise<unknown>): Promise<{ code: string; status: number; message: string; details?: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    return error as { code: string; status: number; message: string };
  }
  throw new Error('expected a refusal');
}

const statsAgent = { name: 'Stats helper', instructions: 'Use spread for statistics.', pythonModules: [{ name: 'stats', source: STATS_SOURCE }] };

describe(AgentDefinitionsService.name, () => {
  describe('create', () => {
    it('should derive the module schemas in the tenant sandbox and keep the whole source with its SHA-256', async () => {
      const { sut, deriver } = setup();
      const agent = await sut.create('ten_a', statsAgent);

      expect(deriver.calls).toEqual([{ tenantId: 'ten_a', module: 'stats', source: STATS_SOURCE }]);
      expect(agent.id).toMatch(/^agt_[0-9a-z]{20}$/);
      const [module] = agent.pythonModules;
      expect(module).toMatchObject({ name: 'stats', source: STATS_SOURCE, sha256: sha256OfSource(STATS_SOURCE) });
      expect(module!.functions).toEqual([
        {
          name: 'spread',
          description: 'Mean and standard deviation of some numbers.',
          parameters: {
            type: 'object',
            properties: {
              values: { type: 'array', items: { type: 'number' }, description: 'The numbers; None entries are skipped.' },
              ddof: { type: 'integer', description: "1 for the sample deviation, 0 for the population's.", default: 1 },
            },
            required: ['values'],
            additionalProperties: false,
          },
          required: ['values'],
        },
      ]);
    });

    it('should default to the configured model, every built-in tool, no routes and no instructions', async () => {
      const { sut, deriver } = setup();
      const agent = await sut.create('ten_a', { name: 'Plain' });
      expect(agent).toMatchObject({ name: 'Plain', instructions: '', model: 'default', tools: [...AGENT_BUILTIN_TOOLS], backendRoutes: [], pythonModules: [] });
      expect(deriver.calls).toEqual([]);
    });

    it('should keep the template its sessions start from, one the tenant can name, until it is changed or cleared', async () => {
      const { sut } = setup();
      const agent = await sut.create('ten_a', { name: 'Analyst', template: 'analytics:2' });
      expect(agent.template).toBe('analytics:2');
      expect((await sut.update('ten_a', agent.id, { instructions: 'be brief' })).template).toBe('analytics:2');
      expect((await sut.update('ten_a', agent.id, { template: null })).template).toBeNull();
      expect(await refusal(sut.create('ten_b', { name: 'Other', template: 'analytics' }))).toMatchObject({ code: 'TEMPLATE_NOT_FOUND', status: 404 });
      expect(await refusal(sut.update('ten_a', agent.id, { template: 'missing' }))).toMatchObject({ code: 'TEMPLATE_NOT_FOUND' });
      expect((await sut.get('ten_a', agent.id)).template).toBeNull();
    });

    it("should keep a network policy within the tenant's ceiling until it is changed or cleared, and refuse one outside it", async () => {
      const { sut } = setup();
      const agent = await sut.create('ten_a', { name: 'Fetcher', network: { allow: ['PyPI.org', 'api.example.com'] } });
      expect(agent.network).toEqual({ allow: ['pypi.org', 'api.example.com'] });
      expect((await sut.update('ten_a', agent.id, { instructions: 'be brief' })).network).toEqual({ allow: ['pypi.org', 'api.example.com'] });
      expect(await refusal(sut.update('ten_a', agent.id, { network: { allow: ['pypi.org', 'evil.test'] } }))).toMatchObject({
        code: 'NETWORK_NOT_ALLOWED',
        status: 422,
        details: { entries: ['evil.test'] },
      });
      expect((await sut.get('ten_a', agent.id)).network).toEqual({ allow: ['pypi.org', 'api.example.com'] });
      expect((await sut.update('ten_a', agent.id, { network: null })).network).toBeNull();
      expect(await refusal(sut.create('ten_b', { name: 'Other', network: { allow: ['pypi.org'] } }))).toMatchObject({ code: 'NETWORK_NOT_ALLOWED' });
      expect(await refusal(sut.create('ten_a', { name: 'Bad', network: { allow: [42] } }))).toMatchObject({ code: 'INVALID_NETWORK_POLICY', status: 400 });
    });

    it("should keep the tier its sessions run on, one offered here and allowed the tenant, until it is changed or cleared", async () => {
      const { sut } = setup();
      expect((await sut.create('ten_a', { name: 'Plain' })).tier).toBeNull();
      const agent = await sut.create('ten_a', { name: 'Isolated', tier: 'gvisor' });
      expect(agent.tier).toBe('gvisor');
      expect((await sut.update('ten_a', agent.id, { instructions: 'be brief' })).tier).toBe('gvisor');
      expect((await sut.update('ten_a', agent.id, { tier: 'runc' })).tier).toBe('runc');
      expect((await sut.update('ten_a', agent.id, { tier: null })).tier).toBeNull();
      expect(await refusal(sut.create('ten_b', { name: 'Other', tier: 'gvisor' }))).toMatchObject({
        code: 'TIER_NOT_ALLOWED',
        status: 422,
        details: { allowed: ['runc'] },
      });
      expect((await sut.create('ten_b', { name: 'Runc', tier: 'runc' })).tier).toBe('runc');
      expect(await refusal(sut.create('ten_a', { name: 'Bad', tier: 'kata' as SandboxTier }))).toMatchObject({
        code: 'INVALID_AGENT_DEFINITION',
        status: 400,
        details: { field: 'tier' },
      });
    });

    it('should keep the idle action of its sessions, hibernate or end on any tier, until it is changed or cleared', async () => {
      const { sut } = setup({}, ['runc']);
      expect((await sut.create('ten_a', { name: 'Plain' })).idleAction).toBeNull();
      const agent = await sut.create('ten_b', { name: 'Brief', idleAction: 'end' });
      expect(agent.idleAction).toBe('end');
      expect((await sut.update('ten_b', agent.id, { instructions: 'be brief' })).idleAction).toBe('end');
      expect((await sut.update('ten_b', agent.id, { idleAction: 'hibernate' })).idleAction).toBe('hibernate');
      expect((await sut.update('ten_b', agent.id, { idleAction: null })).idleAction).toBeNull();
      for (const odd of ['sleep', '', 42, true]) {
        expect(await refusal(sut.create('ten_a', { name: 'Bad', idleAction: odd as never }))).toMatchObject({
          code: 'INVALID_AGENT_DEFINITION',
          status: 400,
          details: { field: 'idleAction' },
        });
      }
      expect(await refusal(sut.update('ten_b', agent.id, { idleAction: 'nap' as never }))).toMatchObject({ details: { field: 'idleAction' } });
      expect((await sut.get('ten_b', agent.id)).idleAction).toBeNull();
    });

    it('should refuse a tier this deployment does not offer, on create and on update, and keep the stored one', async () => {
      const { sut } = setup({}, ['runc']);
      expect(await refusal(sut.create('ten_a', { name: 'Isolated', tier: 'gvisor' }))).toMatchObject({ code: 'TIER_NOT_AVAILABLE', status: 422 });
      const agent = await sut.create('ten_a', { name: 'Plain', tier: 'runc' });
      expect(await refusal(sut.update('ten_a', agent.id, { tier: 'gvisor' }))).toMatchObject({ code: 'TIER_NOT_AVAILABLE' });
      expect((await sut.get('ten_a', agent.id)).tier).toBe('runc');
    });

    it.each([
      ['a syntax error', 'def broken(:\n    pass\n', 'PYTHON_SYNTAX_ERROR', /does not parse/],
      ['no public function', 'import math\n\ndef _helper():\n    return 1\n', 'PYTHON_NO_PUBLIC_FUNCTIONS', /defines no public function/],
      ['*args', 'def total(*numbers: float) -> float:\n    return sum(numbers)\n', 'PYTHON_VARARGS_NOT_SUPPORTED', /takes \*numbers/],
    ])('should refuse a module with %s as 422 and store nothing', async (_, source, code, message) => {
      const { sut, repo } = setup();
      const error = await refusal(sut.create('ten_a', { name: 'Bad', pythonModules: [{ name: 'bad', source }] }));
      expect(error).toMatchObject({ code, status: 422 });
      expect(error.message).toMatch(message);
      expect(error.message).toContain('"bad"');
      expect(repo.rows).toEqual([]);
    });

    it('should list every problem of a module in the details', async () => {
      const { sut } = setup();
      const source = 'def a(*xs):\n    pass\n\ndef b(x, /):\n    pass\n';
      const error = await refusal(sut.create('ten_a', { name: 'Bad', pythonModules: [{ name: 'bad', source }] }));
      expect(error).toMatchObject({ code: 'PYTHON_VARARGS_NOT_SUPPORTED', details: { module: 'bad' } });
      expect((error.details!.errors as { code: string }[]).map((e) => e.code)).toEqual(['VARARGS_NOT_SUPPORTED', 'POSITIONAL_ONLY_NOT_SUPPORTED']);
      expect(error.message).toContain('1 more problem');
    });

    it('should refuse an unknown built-in tool before any sandbox run', async () => {
      const { sut, deriver } = setup();
      const error = await refusal(sut.create('ten_a', { ...statsAgent, tools: ['ls', 'rm_rf'] }));
      expect(error).toMatchObject({ code: 'UNKNOWN_TOOL', status: 400, details: { tool: 'rm_rf' } });
      expect(deriver.calls).toEqual([]);
    });

    it.each([
      ['a blank name', { name: '  ' }, 'INVALID_AGENT_DEFINITION'],
      ['a blank model', { name: 'A', model: '' }, 'INVALID_AGENT_DEFINITION'],
      ['a tool listed twice', { name: 'A', tools: ['ls', 'ls'] }, 'INVALID_AGENT_DEFINITION'],
      ['a module name that is not an identifier', { name: 'A', pythonModules: [{ name: 'my-module', source: 'def f():\n    pass\n' }] }, 'INVALID_TOOL_MODULE'],
      ['a module named twice', { name: 'A', pythonModules: [{ name: 'm', source: 'def f():\n    pass\n' }, { name: 'm', source: 'def g():\n    pass\n' }] }, 'INVALID_AGENT_DEFINITION'],
      ['a route prefix that is not a folder', { name: 'A', backendRoutes: [{ prefix: '/memories', backend: 'tenant-store' }] }, 'INVALID_BACKEND_CONFIG'],
    ])('should refuse %s as 400', async (_, input, code) => {
      const { sut } = setup();
      expect(await refusal(sut.create('ten_a', input as never))).toMatchObject({ code, status: 400 });
    });

    it('should keep a filesystem route to a configured root, and refuse one the deployment does not have', async () => {
      const { sut } = setup({ AGENT_FILESYSTEM_ROOTS: 'datasets=/srv/datasets' });
      const routes = [{ prefix: '/datasets/', backend: 'filesystem', root: 'datasets' }, { prefix: '/memories/', backend: 'tenant-store' }];
      expect((await sut.create('ten_a', { name: 'A', backendRoutes: routes })).backendRoutes).toEqual(routes);
      const error = await refusal(sut.create('ten_a', { name: 'B', backendRoutes: [{ prefix: '/x/', backend: 'filesystem', root: 'secrets' }] }));
      expect(error).toMatchObject({ code: 'INVALID_BACKEND_CONFIG', status: 400 });
      expect(error.message).toContain('"secrets" is not configured');
    });

    it('should refuse a function named like a built-in tool, or defined by two modules', async () => {
      const { sut, deriver } = setup();
      const clash = await refusal(sut.create('ten_a', { name: 'A', pythonModules: [{ name: 'files', source: 'def grep(pattern: str) -> str:\n    return pattern\n' }] }));
      expect(clash).toMatchObject({ code: 'TOOL_NAME_CONFLICT', status: 422, details: { module: 'files', function: 'grep' } });

      const twice = await refusal(
        sut.create('ten_a', {
          name: 'B',
          pythonModules: [
            { name: 'one', source: STATS_SOURCE },
            { name: 'two', source: 'def spread() -> int:\n    return 0\n' },
            { name: 'three', source: 'def never() -> int:\n    return 0\n' },
          ],
        }),
      );
      expect(twice).toMatchObject({ code: 'TOOL_NAME_CONFLICT', details: { module: 'two', function: 'spread' } });
      // Refused as soon as the conflict appeared: the third module never went to the sandbox.
      expect(deriver.calls.map((c) => c.module)).toEqual(['files', 'one', 'two']);
    });

    it('should refuse a second agent with the same name in one tenant, not in another', async () => {
      const { sut } = setup();
      await sut.create('ten_a', { name: 'Twin' });
      expect(await refusal(sut.create('ten_a', { name: 'Twin' }))).toMatchObject({ code: 'AGENT_NAME_TAKEN', status: 409 });
      await expect(sut.create('ten_b', { name: 'Twin' })).resolves.toMatchObject({ name: 'Twin' });
    });

    it('should store nothing when the sandbox cannot answer', async () => {
      const { sut, repo, deriver } = setup();
      deriver.derive = async () => {
        throw AgentDefinitionError.derivationFailed('stats', 'it did not finish within the time limit.');
      };
      expect(await refusal(sut.create('ten_a', statsAgent))).toMatchObject({ code: 'SCHEMA_DERIVATION_FAILED', status: 502 });
      expect(repo.rows).toEqual([]);
    });
  });

  describe('get, list, update and delete', () => {
    it('should only ever see the tenant\'s own agents', async () => {
      const { sut } = setup();
      const agent = await sut.create('ten_a', { name: 'Mine' });
      expect(await sut.get('ten_a', agent.id)).toEqual(agent);
      expect(await sut.list('ten_b')).toEqual([]);
      for (const attempt of [
        sut.get('ten_b', agent.id),
        sut.update('ten_b', agent.id, { name: 'Stolen' }),
        sut.delete('ten_b', agent.id),
        sut.export('ten_b', agent.id),
      ]) {
        expect(await refusal(attempt)).toMatchObject({ code: 'AGENT_NOT_FOUND', status: 404 });
      }
      expect((await sut.get('ten_a', agent.id)).name).toBe('Mine');
    });

    it('should change only the fields a patch names', async () => {
      const { sut } = setup();
      const agent = await sut.create('ten_a', { ...statsAgent, model: 'gpt-4o-mini' });
      const updated = await sut.update('ten_a', agent.id, { instructions: 'Be brief.', tools: ['execute_python'] });
      expect(updated).toMatchObject({ name: 'Stats helper', model: 'gpt-4o-mini', instructions: 'Be brief.', tools: ['execute_python'] });
      expect(updated.pythonModules).toEqual(agent.pythonModules);
    });

    it('should derive schemas again only for a module whose source changed', async () => {
      const { sut, deriver } = setup();
      const agent = await sut.create('ten_a', statsAgent);
      const renamed = await sut.update('ten_a', agent.id, { pythonModules: [{ name: 'statistics_tools', source: STATS_SOURCE }] });
      expect(deriver.calls).toHaveLength(1);
      expect(renamed.pythonModules[0]).toMatchObject({ name: 'statistics_tools', functions: agent.pythonModules[0]!.functions });

      const source = 'def median(values: list[float]) -> float:\n    """The middle value."""\n    import statistics\n    return statistics.median(values)\n';
      const changed = await sut.update('ten_a', agent.id, { pythonModules: [{ name: 'stats', source }] });
      expect(deriver.calls).toHaveLength(2);
      expect(changed.pythonModules[0]!.functions.map((f) => f.name)).toEqual(['median']);
    });

    it('should refuse a patch that breaks the definition and keep the agent as it was', async () => {
      const { sut } = setup();
      const agent = await sut.create('ten_a', statsAgent);
      await sut.create('ten_a', { name: 'Other' });
      expect(await refusal(sut.update('ten_a', agent.id, { name: 'Other' }))).toMatchObject({ code: 'AGENT_NAME_TAKEN' });
      expect(await refusal(sut.update('ten_a', agent.id, { pythonModules: [{ name: 'stats', source: 'def (' }] }))).toMatchObject({
        code: 'PYTHON_SYNTAX_ERROR',
      });
      expect(await sut.get('ten_a', agent.id)).toEqual(agent);
    });

    it('should delete an agent once', async () => {
      const { sut } = setup();
      const agent = await sut.create('ten_a', { name: 'Gone' });
      await sut.delete('ten_a', agent.id);
      expect(await refusal(sut.delete('ten_a', agent.id))).toMatchObject({ code: 'AGENT_NOT_FOUND' });
      expect(await sut.list('ten_a')).toEqual([]);
    });
  });

  describe('export and import', () => {
    async function exported(env: Record<string, string> = {}) {
      const ctx = setup(env);
      const agent = await ctx.sut.create('ten_a', { ...statsAgent, tools: ['execute_python', 'read_file'] });
      return { ...ctx, agent, bundle: await ctx.sut.export('ten_a', agent.id) };
    }

    it('should import a bundle into another tenant without running the module, and export it byte for byte the same', async () => {
      const { sut, deriver, agent, bundle } = await exported();
      const copy = await sut.import('ten_b', JSON.parse(serializeAgentBundle(bundle)));

      expect(deriver.calls).toHaveLength(1);
      expect(copy.id).not.toBe(agent.id);
      const strip = ({ id: _i, tenantId: _t, createdAt: _c, updatedAt: _u, ...rest }: AgentDefinition) => rest;
      expect(strip(copy)).toEqual(strip(agent));
      const again = await sut.export('ten_b', copy.id);
      expect(JSON.stringify(again.agent)).toBe(JSON.stringify(bundle.agent));
      expect(again.sha256).toBe(bundle.sha256);
    });

    it("should leave a definition's tier out of its bundle, and import it with the tenant's default", async () => {
      const { sut } = setup();
      const agent = await sut.create('ten_a', { name: 'Isolated', tier: 'gvisor' });
      const bundle = await sut.export('ten_a', agent.id);
      expect(bundle.agent).not.toHaveProperty('tier');
      expect((await sut.import('ten_b', bundle)).tier).toBeNull();
    });

    it("should leave a definition's idle action out of its bundle, and import it with the deployment's", async () => {
      const { sut } = setup();
      const agent = await sut.create('ten_a', { name: 'Brief', idleAction: 'end' });
      const bundle = await sut.export('ten_a', agent.id);
      expect(bundle.agent).not.toHaveProperty('idleAction');
      expect((await sut.import('ten_b', bundle)).idleAction).toBeNull();
    });

    it('should refuse a bundle with one byte changed in a module source', async () => {
      const { sut, bundle, repo } = await exported();
      const text = serializeAgentBundle(bundle).replace('statistics.mean(data)', 'statistics.mean(dat4)');
      const error = await refusal(sut.import('ten_b', JSON.parse(text)));
      expect(error).toMatchObject({ code: 'BUNDLE_MODULE_HASH_MISMATCH', status: 422, details: { module: 'stats' } });
      expect(repo.rows).toHaveLength(1);
    });

    it('should refuse a re-hashed bundle that lists a function its source does not define', async () => {
      const { sut, bundle } = await exported();
      const [module] = bundle.agent.pythonModules;
      const forged: AgentBundle = exportAgentBundle({
        ...bundle.agent,
        pythonModules: [{ ...module!, functions: [{ ...module!.functions[0]!, name: 'exfiltrate' }] }],
      });
      expect(await refusal(sut.import('ten_b', forged))).toMatchObject({ code: 'BUNDLE_FUNCTION_MISSING', details: { function: 'exfiltrate' } });
    });

    it('should refuse a bundle whose filesystem route names a root this deployment does not have', async () => {
      const withRoot = setup({ AGENT_FILESYSTEM_ROOTS: 'datasets=/srv/datasets' });
      const agent = await withRoot.sut.create('ten_a', { name: 'A', backendRoutes: [{ prefix: '/datasets/', backend: 'filesystem', root: 'datasets' }] });
      const bundle = await withRoot.sut.export('ten_a', agent.id);
      expect(bundle.agent.backendRoutes).toEqual([{ prefix: '/datasets/', backend: 'filesystem', root: 'datasets' }]);

      const elsewhere = setup();
      expect(await refusal(elsewhere.sut.import('ten_b', bundle))).toMatchObject({ code: 'INVALID_BACKEND_CONFIG', status: 400 });
    });

    it('should refuse what is not a bundle', async () => {
      const { sut } = setup();
      expect(await refusal(sut.import('ten_a', { name: 'x' }))).toMatchObject({ code: 'BUNDLE_INVALID', status: 400 });
    });

    it('should refuse an import whose agent name the tenant already uses', async () => {
      const { sut, bundle } = await exported();
      expect(await refusal(sut.import('ten_a', bundle))).toMatchObject({ code: 'AGENT_NAME_TAKEN', status: 409 });
    });
  });
});
