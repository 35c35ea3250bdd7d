import { tool, type StructuredToolInterface } from '@langchain/core/tools';
import type { JsonSchema7ObjectType } from '@langchain/core/utils/json_schema';
import type { ExecuteOptions, ExecuteResult } from '../backends/backend-protocol.js';
import { backendContextOf } from '../tools/backend-scope.js';
import { toolCallContext } from '../tools/tool-context.js';
import { buildPythonToolCallCode, parsePythonToolCallOutput, type PythonToolCallOutcome } from './call-snippet.js';
import { PythonToolError } from './python-tools.errors.js';
import type { PythonToolModule, PythonToolSpec } from './tool-module.js';

// One public function of a user-defined Python tool module as a LangChain tool. Like the
// built-in tools it is built once and serves every thread: at call time it takes tenant,
// thread and sandbox from the RunnableConfig (toolCallContext) and runs the function in
// that thread's session, where the module is loaded once, helpers and imports included.
//
// The model gets the function's return value as JSON text, or, when the call fails, a
// sentence saying what failed with the Python exception and its traceback (the
// ToolMessage then has status "error" through the artifact's isError).

export interface PythonFunctionToolArtifact {
  isError?: boolean;
  // The Python run, for clients (the tool node passes the artifact through).
  execution?: { id?: string; status: string };
  // What failed: loading the module, finding the function, binding the arguments, the
  // call, or turning its result into JSON.
  stage?: string;
}

export type PythonFunctionToolResult = [text: string, artifact: PythonFunctionToolArtifact];

export interface PythonFunctionToolOptions {
  // Per call; the session's own limit when unset.
  timeoutMs?: number;
}

// Failures that are about this call and that the model can react to; anything else (no
// worker, the database, a stored module that no longer matches its hash) is re-thrown.
const MODEL_FACING_CODES = new Set(['INVALID_TOOL_ARGUMENTS', 'INVALID_SANDBOX_OUTPUT']);

export function createPythonFunctionTool(
  module: PythonToolModule,
  spec: PythonToolSpec,
  options: PythonFunctionToolOptions = {},
): StructuredToolInterface {
  const describeCall = `${spec.name} (Python tool module ${module.name})`;
  return tool(
    async (args: Record<string, unknown>, config): Promise<PythonFunctionToolResult> => {
      const ctx = toolCallContext(config);
      try {
        const code = buildPythonToolCallCode({ source: module.source, sha256: module.sha256, functionName: spec.name, args });
        const execute: ExecuteOptions = options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs };
        if (config?.signal) execute.signal = config.signal;
        // With the agent's template, network, tier and idle action, for when this call starts
        // the session.
        const run = await ctx.sandbox.executePython(backendContextOf(ctx), code, execute);
        return renderRun(spec.name, module.name, run);
      } catch (error) {
        if (error instanceof PythonToolError && MODEL_FACING_CODES.has(error.code)) {
          return [`Error: ${describeCall} could not be called: ${error.message}`, { isError: true }];
        }
        throw error;
      }
    },
    {
      name: spec.name,
      description: spec.description.trim() || `Calls the Python function ${spec.name} of tool module ${module.name}.`,
      schema: spec.parameters as JsonSchema7ObjectType,
      responseFormat: 'content_and_artifact',
    },
  ) as StructuredToolInterface;
}

// Every function of every module of an agent definition, in definition order.
export function createAgentPythonTools(
  definition: { pythonModules: readonly PythonToolModule[] },
  options: PythonFunctionToolOptions = {},
): StructuredToolInterface[] {
  return definition.pythonModules.flatMap((module) => module.functions.map((spec) => createPythonFunctionTool(module, spec, options)));
}

const STOPPED: Record<string, string> = {
  timeout: 'did not finish within the time limit and was stopped. Call it with less work, or do the work in smaller calls.',
  memory:
    'ran out of memory and the Python session was restarted (variables from earlier runs are gone; files are kept). ' +
    'Call it with less data.',
  killed: 'was stopped before it finished (its session was stopped or restarted). Call it again.',
};

function renderRun(name: string, module: string, run: ExecuteResult): PythonFunctionToolResult {
  const execution = { ...(run.executionId ? { id: run.executionId } : {}), status: run.status };
  const stopped = STOPPED[run.status];
  if (stopped) return [`Error: ${name} ${stopped}`, { isError: true, execution }];
  if (run.status !== 'ok') {
    // Only an interrupt escapes the call runner as a REPL error; show what there is.
    const error = run.error;
    const detail = error ? `${error.name}: ${error.value}${error.traceback ? `\n\n${error.traceback.trimEnd()}` : ''}` : 'no details were reported.';
    return [`Error: ${name} failed: ${detail}`, { isError: true, execution }];
  }
  if (run.truncated) {
    return [
      `Error: the result of ${name} is larger than the output limit and was cut, so it cannot be read. Call it so that it returns less.`,
      { isError: true, execution },
    ];
  }
  const outcome = parsePythonToolCallOutput(run.result?.text ?? '');
  if (outcome.ok) return [JSON.stringify(outcome.result), { execution }];
  return [failureText(name, module, outcome.error), { isError: true, execution, stage: outcome.error.stage }];
}

type CallError = Extract<PythonToolCallOutcome, { ok: false }>['error'];

function failureText(name: string, module: string, error: CallError): string {
  const exception = `${error.type}: ${error.message}`;
  // The runner's traceback keeps only the tool's own frames; without any it is just the
  // exception line, already shown.
  const traceback = error.traceback.startsWith('Traceback') ? `\n\n${error.traceback.trimEnd()}` : '';
  switch (error.stage) {
    case 'load':
      return `Error: the Python tool module ${module} failed to load, so ${name} cannot run: ${exception}${traceback}`;
    case 'lookup':
      return `Error: ${error.message}`;
    case 'arguments':
      return `Error: invalid arguments for ${name}: ${error.message}. Call it again with the parameters its schema lists.`;
    case 'call':
      return `Error: ${name} raised ${exception}${traceback}`;
    case 'result':
      return `Error: ${name} returned a value that cannot be turned into JSON: ${exception}`;
  }
}
