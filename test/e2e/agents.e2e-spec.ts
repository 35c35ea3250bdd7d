import type { INestApplication } from '@nestjs/common';
import type { ToolMessage } from '@langchain/core/messages';
import type { StructuredToolInterface } from '@langchain/core/tools';
import { TenantsService } from '@drydock/core';
import { SessionExecutionsService, SessionsService } from '@drydock/sessions';
import {
  CONFIG_TOOL_CALL,
  createAgentPythonTools,
  createPythonFunctionTool,
  sha256OfSource,
  type ExecuteResult,
  type PythonToolModule,
  type SandboxBackend,
  type ToolCallContext,
} from '@drydock/agents';
import { startPlatform, type Platform } from './support/platform.js';
import type { ApiClient } from './support/api-client.js';

// A module as a tenant writes it: an import, a private helper the public functions call,
// type hints and Google-style docstrings.
const STATS_SOURCE = `import statistics

def _clean(values):
    return [float(v) for v in values if v is not None]

def spread(values: list[float | None], ddof: int = 1) -> dict:
    """Mean and standard deviation of some numbers.

    Args:
        values: The numbers; None entries are skipped.
        ddof: 1 for the sample deviation, 0 for the population's.
    """
    data = _clean(values)
    stdev = statistics.stdev(data) if ddof else statistics.pstdev(data)
    return {"mean": statistics.mean(data), "stdev": stdev}

def count_lines(path: str) -> int:
    """Count the lines of one of this conversation's files."""
    with open("/session" + path) as f:
        return sum(1 for _ in f)

def strict_mean(values: list[float]) -> float:
    """Mean of the numbers, refusing an empty list."""
    return statistics.mean(_clean(values))
`;

const SPREAD_SCHEMA = {
  name: 'spread',
  description: 'Mean and standard deviation of some numbers.',
  parameters: {
    type: 'object',
    properties: {
      values: { type: 'array', items: { type: ['number', 'null'] }, description: 'The numbers; None entries are skipped.' },
      ddof: { type: 'integer', description: "1 for the sample deviation, 0 for the population's.", default: 1 },
    },
    required: ['values'],
    additionalProperties: false,
  },
  required: ['values'],
};

// The thread's sandbox as the agent's tool node gives it to a tool: code runs in the
// thread's live session (created on first use) through the gateway's own services.
function sessionSandbox(gateway: INestApplication): SandboxBackend {
  const tenants = gateway.get(TenantsService);
  const sessions = gateway.get(SessionsService);
  const executions = gateway.get(SessionExecutionsService);
  const unused = async (): Promise<never> => {
    throw new Error('Python function tools only execute Python');
  };
  return {
    async executePython(ctx, code, options = {}) {
      const tenant = await tenants.get(ctx.tenantId);
      const { session } = await sessions.create(ctx.tenantId, { threadId: ctx.threadId });
      const view = await executions.execute({ tenantId: ctx.tenantId, limits: tenant.limits }, session.id, { code, timeoutMs: options.timeoutMs });
      return {
        // A finished run's status (the record's type also has queued/running).
        status: view.status as ExecuteResult['status'],
        stdout: view.stdout,
        stderr: view.stderr,
        truncated: view.truncated,
        result: view.result,
        error: view.error,
        stateLost: view.stateLost,
        executionId: view.id,
      };
    },
    execute: unused,
    ls: unused,
    read: unused,
    write: unused,
    edit: unused,
    grep: unused,
    glob: unused,
    delete: unused,
  };
}

describe('Agent definitions', () => {
  let platform: Platform;
  let api: ApiClient & { tenantId: string };
  let other: ApiClient & { tenantId: string };
  let sandbox: SandboxBackend;

  const patch = (client: ApiClient, path: string, json: unknown) => client.request('PATCH', path, { json });

  const createStats = async (client: ApiClient, name: string) => {
    const res = await client.post('/v1/agents', {
      name,
      instructions: 'Answer questions about numbers. Use spread for statistics.',
      model: 'default',
      tools: ['execute_python', 'read_file'],
      backendRoutes: [{ prefix: '/memories/', backend: 'tenant-store' }],
      pythonModules: [{ name: 'stats', source: STATS_SOURCE }],
    });
    expect(res.status).toBe(201);
    return res.body;
  };

  const callTool = async (tool: StructuredToolInterface, tenantId: string, threadId: string, args: Record<string, unknown>) => {
    const ctx: ToolCallContext = { tenantId, threadId, toolCallId: `call_${tool.name}`, backend: sandbox, sandbox, stateFiles: {} };
    return (await tool.invoke(
      { id: ctx.toolCallId, name: tool.name, args, type: 'tool_call' },
      { configurable: { [CONFIG_TOOL_CALL]: ctx } },
    )) as ToolMessage;
  };

  beforeAll(async () => {
    platform = await startPlatform();
    api = await platform.newTenant();
    other = await platform.newTenant();
    sandbox = sessionSandbox(platform.gateway);
  });

  afterAll(async () => {
    await platform?.close();
  });

  describe('REST', () => {
    it('should create an agent, its function schemas derived in the tenant\'s own sandbox from hints and docstrings', async () => {
      const agent = await createStats(api, 'Stats');
      expect(agent).toMatchObject({
        id: expect.stringMatching(/^agt_[0-9a-z]{20}$/),
        name: 'Stats',
        model: 'default',
        tools: ['execute_python', 'read_file'],
        backendRoutes: [{ prefix: '/memories/', backend: 'tenant-store' }],
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const [module] = agent.pythonModules;
      // The whole module is kept: imports and the private helper the tools call.
      expect(module).toMatchObject({ name: 'stats', source: STATS_SOURCE, sha256: sha256OfSource(STATS_SOURCE) });
      expect(module.functions.map((f: { name: string }) => f.name)).toEqual(['spread', 'count_lines', 'strict_mean']);
      expect(module.functions[0]).toEqual(SPREAD_SCHEMA);
      expect(module.functions[1].parameters.properties).toEqual({ path: { type: 'string' } });

      // Derived in a session of this tenant on the reserved thread, not in the gateway.
      const sessions = (await api.get('/v1/sessions')).body.sessions as { threadId: string }[];
      expect(sessions.map((s) => s.threadId)).toContain('__agent_tools__');
    });

    it('should list, get, patch and delete the tenant\'s agents', async () => {
      const agent = await createStats(api, 'Lifecycle');
      expect((await api.get('/v1/agents')).body.agents.map((a: { id: string }) => a.id)).toContain(agent.id);
      expect((await api.get(`/v1/agents/${agent.id}`)).body).toEqual(agent);

      const changed = await patch(api, `/v1/agents/${agent.id}`, { instructions: 'Be brief.', model: 'gpt-4o-mini' });
      expect(changed.status).toBe(200);
      expect(changed.body).toMatchObject({ name: 'Lifecycle', instructions: 'Be brief.', model: 'gpt-4o-mini', pythonModules: agent.pythonModules });
      expect(Date.parse(changed.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(agent.updatedAt));

      const source = 'def double(x: int) -> int:\n    """Twice x."""\n    return 2 * x\n';
      const replaced = await patch(api, `/v1/agents/${agent.id}`, { pythonModules: [{ name: 'maths', source }] });
      expect(replaced.status).toBe(200);
      expect(replaced.body.pythonModules).toEqual([
        {
          name: 'maths',
          source,
          sha256: sha256OfSource(source),
          functions: [
            {
              name: 'double',
              description: 'Twice x.',
              parameters: { type: 'object', properties: { x: { type: 'integer' } }, required: ['x'], additionalProperties: false },
              required: ['x'],
            },
          ],
        },
      ]);

      expect((await api.delete(`/v1/agents/${agent.id}`)).status).toBe(204);
      expect((await api.get(`/v1/agents/${agent.id}`)).body.error.code).toBe('AGENT_NOT_FOUND');
      expect((await api.delete(`/v1/agents/${agent.id}`)).status).toBe(404);
    });

    it('should answer 404 AGENT_NOT_FOUND for another tenant\'s agent, whatever the method', async () => {
      const agent = await createStats(api, 'Private');
      for (const res of [
        await other.get(`/v1/agents/${agent.id}`),
        await other.get(`/v1/agents/${agent.id}/export`),
        await patch(other, `/v1/agents/${agent.id}`, { name: 'Mine now' }),
        await other.delete(`/v1/agents/${agent.id}`),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('AGENT_NOT_FOUND');
      }
      expect((await other.get('/v1/agents')).body.agents.map((a: { id: string }) => a.id)).not.toContain(agent.id);
      expect((await api.get(`/v1/agents/${agent.id}`)).body.name).toBe('Private');
      expect((await platform.anonymous.get('/v1/agents')).status).toBe(401);
    });

    it('should refuse a module with a syntax error with 422 PYTHON_SYNTAX_ERROR, and store nothing', async () => {
      const res = await api.post('/v1/agents', { name: 'Broken', pythonModules: [{ name: 'broken', source: 'def oops(:\n    return 1\n' }] });
      expect(res.status).toBe(422);
      expect(res.body.error).toMatchObject({
        code: 'PYTHON_SYNTAX_ERROR',
        message: expect.stringContaining('"broken"'),
        details: { module: 'broken', errors: [expect.objectContaining({ code: 'SYNTAX_ERROR', line: 1 })] },
      });
      expect((await api.get('/v1/agents')).body.agents.map((a: { name: string }) => a.name)).not.toContain('Broken');
    });

    it('should refuse a module without public functions and one with **kwargs with their own codes', async () => {
      const none = await api.post('/v1/agents', { name: 'Empty', pythonModules: [{ name: 'empty', source: 'def _hidden():\n    return 1\n' }] });
      expect(none.status).toBe(422);
      expect(none.body.error.code).toBe('PYTHON_NO_PUBLIC_FUNCTIONS');
      const kwargs = await api.post('/v1/agents', { name: 'Kw', pythonModules: [{ name: 'kw', source: 'def f(**options):\n    return options\n' }] });
      expect(kwargs.status).toBe(422);
      expect(kwargs.body.error.code).toBe('PYTHON_VARARGS_NOT_SUPPORTED');
    });

    it('should refuse bad input with 400 and a stable code, and a taken name with 409', async () => {
      const cases: [unknown, string][] = [
        [{}, 'VALIDATION_FAILED'],
        [{ name: 'A', tools: ['ls', 'format_disk'] }, 'UNKNOWN_TOOL'],
        [{ name: 'A', backendRoutes: [{ prefix: '/data/', backend: 'filesystem', root: 'nowhere' }] }, 'INVALID_BACKEND_CONFIG'],
        [{ name: 'A', pythonModules: [{ name: 'not a name', source: 'def f():\n    pass\n' }] }, 'INVALID_TOOL_MODULE'],
        [{ name: ' ' }, 'INVALID_AGENT_DEFINITION'],
      ];
      for (const [body, code] of cases) {
        const res = await api.post('/v1/agents', body);
        expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 400, code });
      }
      await createStats(api, 'Twice');
      const taken = await api.post('/v1/agents', { name: 'Twice' });
      expect(taken.status).toBe(409);
      expect(taken.body.error.code).toBe('AGENT_NAME_TAKEN');
      const renamed = await patch(api, `/v1/agents/${(await api.post('/v1/agents', { name: 'Once' })).body.id}`, { name: 'Twice' });
      expect({ status: renamed.status, code: renamed.body.error?.code }).toEqual({ status: 409, code: 'AGENT_NAME_TAKEN' });
    });

    it('should export a bundle that imports into another tenant and exports again identically', async () => {
      const agent = await createStats(api, 'Portable');
      const exported = await api.get(`/v1/agents/${agent.id}/export`);
      expect(exported.status).toBe(200);
      expect(exported.body).toMatchObject({ format: 'drydock.agent-bundle', version: 1, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });

      const imported = await other.post('/v1/agents/import', exported.body);
      expect(imported.status).toBe(201);
      expect(imported.body.id).not.toBe(agent.id);
      const { id: _a, createdAt: _b, updatedAt: _c, ...definition } = agent;
      expect(imported.body).toMatchObject(definition);

      const again = await other.get(`/v1/agents/${imported.body.id}/export`);
      expect(JSON.stringify(again.body.agent)).toBe(JSON.stringify(exported.body.agent));
      expect(again.body.sha256).toBe(exported.body.sha256);
      // Import trusts the hashed schemas: the other tenant's sandbox was never started for it.
      const sessions = (await other.get('/v1/sessions')).body.sessions as { threadId: string }[];
      expect(sessions.map((s) => s.threadId)).not.toContain('__agent_tools__');
    });

    it('should refuse a bundle with one byte changed in a module source, and anything that is not a bundle', async () => {
      const agent = await createStats(api, 'Tampered');
      const text = JSON.stringify((await api.get(`/v1/agents/${agent.id}/export`)).body);
      const at = text.indexOf('statistics.mean(data)');
      const tampered = JSON.parse(`${text.slice(0, at)}statistics.mean(dat4)${text.slice(at + 'statistics.mean(data)'.length)}`);
      const res = await other.post('/v1/agents/import', tampered);
      expect(res.status).toBe(422);
      expect(res.body.error).toMatchObject({ code: 'BUNDLE_MODULE_HASH_MISMATCH', details: { module: 'stats' } });

      const notBundle = await other.post('/v1/agents/import', { format: 'zip' });
      expect(notBundle.status).toBe(400);
      expect(notBundle.body.error.code).toBe('BUNDLE_INVALID');
      expect((await other.get('/v1/agents')).body.agents.map((a: { name: string }) => a.name)).not.toContain('Tampered');
    });
  });

  describe('Python function tools', () => {
    let modules: PythonToolModule[];

    beforeAll(async () => {
      modules = (await createStats(api, 'Tools')).pythonModules;
    });

    it('should run the function in the thread\'s session, its helper and imports included, and return its JSON result', async () => {
      const [module] = modules;
      const spread = createPythonFunctionTool(module!, module!.functions.find((f) => f.name === 'spread')!);
      const sut = await callTool(spread, api.tenantId, 'tools-1', { values: [2, 4, 4, 4, 5, 5, 7, 9, null], ddof: 0 });
      expect(sut.artifact).toMatchObject({ execution: { status: 'ok', id: expect.stringMatching(/^exe_/) } });
      expect(sut.artifact.isError).toBeUndefined();
      expect(JSON.parse(sut.content as string)).toEqual({ mean: 5, stdev: 2 });
    });

    it('should see the thread\'s files, as code in that session does', async () => {
      const put = await api.request('PUT', '/v1/threads/tools-2/files/content?path=/notes.txt', {
        body: 'one\ntwo\nthree\n',
        headers: { 'content-type': 'text/plain' },
      });
      expect(put.status).toBe(201);
      const [countLines] = createAgentPythonTools({ pythonModules: modules }).filter((t) => t.name === 'count_lines');
      const sut = await callTool(countLines!, api.tenantId, 'tools-2', { path: '/notes.txt' });
      expect(sut.content).toBe('3');
    });

    it('should give the model the exception and its traceback when the function raises', async () => {
      const [strictMean] = createAgentPythonTools({ pythonModules: modules }).filter((t) => t.name === 'strict_mean');
      const sut = await callTool(strictMean!, api.tenantId, 'tools-1', { values: [] });
      expect(sut.artifact).toMatchObject({ isError: true, stage: 'call' });
      expect(sut.content).toMatch(/^Error: strict_mean raised StatisticsError: mean requires at least one data point/);
      expect(sut.content).toContain('Traceback (most recent call last):');
      expect(sut.content).toContain('in strict_mean');
    });

    it('should work the same from an agent imported into another tenant, in that tenant\'s own sandbox', async () => {
      const source = (await api.get('/v1/agents')).body.agents.find((a: { name: string }) => a.name === 'Tools');
      const bundle = (await api.get(`/v1/agents/${source.id}/export`)).body;
      const imported = await other.post('/v1/agents/import', bundle);
      expect(imported.status).toBe(201);

      const tools = createAgentPythonTools(imported.body);
      expect(tools.map((t) => t.name)).toEqual(['spread', 'count_lines', 'strict_mean']);
      const sut = await callTool(tools[0]!, other.tenantId, 'imported-1', { values: [1, 2, 3, 4] });
      expect(JSON.parse(sut.content as string)).toEqual({ mean: 2.5, stdev: expect.closeTo(1.291, 3) });
      const sessions = (await other.get('/v1/sessions')).body.sessions as { threadId: string }[];
      expect(sessions.map((s) => s.threadId)).toContain('imported-1');
    });
  });
});
