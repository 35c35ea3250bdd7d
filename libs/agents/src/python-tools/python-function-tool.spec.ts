import { ToolMessage } from '@langchain/core/messages';
import type { StructuredToolInterface } from '@langchain/core/tools';
import type { BackendContext, ExecuteResult, SandboxBackend } from '../backends/backend-protocol.js';
import { CONFIG_TOOL_CALL, type ToolCallContext } from '../tools/tool-context.js';
import { createAgentPythonTools, createPythonFunctionTool } from './python-function-tool.js';
import { runReplCells } from './repl-harness.spec-helper.js';
import { createPythonToolModule, type PythonToolSpec } from './tool-module.js';

const STATS_SOURCE = `import statistics

def _clean(values):
    return [float(v) for v in values if v is not None]

def spread(values: list[float]) -> dict:
    """Mean and standard deviation of some numbers."""
    data = _clean(values)
    return {"mean": statistics.mean(data), "stdev": statistics.stdev(data)}

def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()

def broken() -> None:
    """Always fails."""
    return _clean(None)
`;

function aSpec(name: string, properties: Record<string, Record<string, unknown>> = {}, required = Object.keys(properties)): PythonToolSpec {
  return {
    name,
    description: `${name} tool`,
    parameters: { type: 'object', properties: properties as PythonToolSpec['parameters']['properties'], required, additionalProperties: false },
    required,
  };
}

const statsModule = createPythonToolModule({
  name: 'stats',
  source: STATS_SOURCE,
  functions: [aSpec('spread', { values: { type: 'array', items: { type: 'number' } } }), aSpec('shout', { text: { type: 'string' } }), aSpec('broken')],
});

// A sandbox that runs each cell in a fresh python3 (the REPL harness), or answers with a
// fixed result.
function aSandbox(answer?: Partial<ExecuteResult>): SandboxBackend & { codes: string[]; contexts: BackendContext[] } {
  const codes: string[] = [];
  const contexts: BackendContext[] = [];
  const executePython = async (ctx: BackendContext, code: string): Promise<ExecuteResult> => {
    codes.push(code);
    contexts.push(ctx);
    if (answer) return { status: 'ok', stdout: '', stderr: '', truncated: false, ...answer };
    const [cell] = runReplCells([code]);
    if (cell!.error !== undefined) return { status: 'error', stdout: '', stderr: '', truncated: false, error: { name: 'ReplError', value: cell!.error, traceback: '' } };
    return { status: 'ok', stdout: '', stderr: '', truncated: false, result: { text: cell!.value ?? undefined }, executionId: 'exe_1' };
  };
  return { codes, contexts, executePython } as unknown as SandboxBackend & { codes: string[]; contexts: BackendContext[] };
}

async function call(sut: StructuredToolInterface, args: Record<string, unknown>, sandbox: SandboxBackend, agent: Partial<ToolCallContext> = {}): Promise<ToolMessage> {
  const ctx: ToolCallContext = {
    tenantId: 'ten_a',
    threadId: 'chat-1',
    toolCallId: 'call_1',
    backend: sandbox,
    sandbox,
    stateFiles: {},
    ...agent,
  };
  const message = await sut.invoke(
    { id: 'call_1', name: sut.name, args, type: 'tool_call' },
    { configurable: { [CONFIG_TOOL_CALL]: ctx } },
  );
  return message as ToolMessage;
}

describe(createPythonFunctionTool.name, () => {
  it('should offer the function under its name, description and JSON schema', () => {
    const sut = createPythonFunctionTool(statsModule, statsModule.functions[0]!);
    expect(sut.name).toBe('spread');
    expect(sut.description).toBe('spread tool');
    expect(sut.schema).toEqual(statsModule.functions[0]!.parameters);
  });

  it('should run the function in the thread sandbox, private helper and imports included, and return its JSON result', async () => {
    const sandbox = aSandbox();
    const sut = await call(createPythonFunctionTool(statsModule, statsModule.functions[0]!), { values: [2, 4, 4, 4, 5, 5, 7, 9] }, sandbox);
    expect(JSON.parse(sut.content as string)).toEqual({ mean: 5, stdev: expect.closeTo(2.138, 3) });
    expect(sut.artifact).toEqual({ execution: { id: 'exe_1', status: 'ok' } });
    expect(sut.tool_call_id).toBe('call_1');
    expect(sandbox.codes[0]).toContain('function_name = "spread"');
  });

  it('should return a string result as JSON text', async () => {
    const sut = await call(createPythonFunctionTool(statsModule, statsModule.functions[1]!), { text: 'hi' }, aSandbox());
    expect(sut.content).toBe('"HI"');
  });

  it('should tell the model which exception the function raised, with the traceback through the helper', async () => {
    const sut = await call(createPythonFunctionTool(statsModule, statsModule.functions[2]!), {}, aSandbox());
    expect(sut.artifact).toMatchObject({ isError: true, stage: 'call' });
    expect(sut.content).toMatch(/^Error: broken raised TypeError: 'NoneType' object is not iterable/);
    expect(sut.content).toContain('Traceback (most recent call last):');
    expect(sut.content).toContain('in _clean');
  });

  it('should refuse arguments the schema does not allow before running anything', async () => {
    const sandbox = aSandbox();
    const sut = createPythonFunctionTool(statsModule, statsModule.functions[1]!);
    await expect(call(sut, { text: 'a', extra: 1 }, sandbox)).rejects.toThrow(/did not match expected schema/);
    expect(sandbox.codes).toEqual([]);
  });

  it('should explain a timeout as an error result', async () => {
    const sut = await call(createPythonFunctionTool(statsModule, statsModule.functions[1]!), { text: 'a' }, aSandbox({ status: 'timeout' }));
    expect(sut.artifact).toMatchObject({ isError: true, execution: { status: 'timeout' } });
    expect(sut.content).toMatch(/^Error: shout did not finish within the time limit/);
  });

  it('should refuse a result cut at the output limit rather than hand back half of it', async () => {
    const sut = await call(
      createPythonFunctionTool(statsModule, statsModule.functions[1]!),
      { text: 'a' },
      aSandbox({ truncated: true, result: { text: '{"ok": true, "result": "AAA' } }),
    );
    expect(sut.artifact).toMatchObject({ isError: true });
    expect(sut.content).toMatch(/larger than the output limit/);
  });

  it('should report a sandbox answer that is not the call runner\'s as an error result', async () => {
    const sut = await call(createPythonFunctionTool(statsModule, statsModule.functions[1]!), { text: 'a' }, aSandbox({ result: { text: "'hello'" } }));
    expect(sut.artifact).toMatchObject({ isError: true });
    expect(sut.content).toMatch(/INVALID_SANDBOX_OUTPUT|unreadable tool result/);
  });

  it('should fail loudly outside an agent run', async () => {
    const sut = createPythonFunctionTool(statsModule, statsModule.functions[1]!);
    await expect(sut.invoke({ text: 'a' })).rejects.toMatchObject({ code: 'TOOL_CONTEXT_MISSING' });
  });
});

describe(createAgentPythonTools.name, () => {
  it('should make one tool per function of every module, in definition order', () => {
    const other = createPythonToolModule({ name: 'other', source: 'def ping() -> str:\n    return "pong"\n', functions: [aSpec('ping')] });
    const sut = createAgentPythonTools({ pythonModules: [statsModule, other] });
    expect(sut.map((t) => t.name)).toEqual(['spread', 'shout', 'broken', 'ping']);
  });
});
