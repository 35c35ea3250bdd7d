import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import type { ExecuteOptions } from '../backends/backend-protocol.js';
import { backendContextOf } from './backend-scope.js';
import { renderExecution } from './render-execution.js';
import { toolCallContext, type ToolCallContext } from './tool-context.js';
import type { BuiltinToolDeps } from './tool-deps.js';
import { toolFailure } from './tool-artifact.js';
import { catchToolErrors } from './tool-errors.js';
import { EXECUTE_PYTHON_TOOL_NAME } from './tools.constants.js';

export const EXECUTE_PYTHON_DESCRIPTION = `Run Python code in this conversation's persistent Python session: variables, imports and functions stay defined for later runs, like cells of a notebook.
Returns what the code printed (stdout, stderr), the value of the last line if it is an expression, and the exception with its traceback if one was raised. Each run has a time limit.
The working directory is /session, which holds this conversation's files (the file tools' /data/a.csv is /session/data/a.csv, or data/a.csv). Files written there are visible to the file tools after the run; files written under /session/artifacts/ are kept as downloadable artifacts. There is no network unless the agent's definition allows hosts (your instructions then list them); a refused connection answers HTTP 403 with the reason.
For longer code, prefer python_run_prepared (the code goes in a fenced block of your message instead of the arguments).`;

// Runs `code` in the thread's session. No idempotency key: tool call ids come from the
// model provider and are not guaranteed unique across turns and threads, and a stored
// result handed back for a call that meant to run again would be silently wrong.
// A cancelled run (`signal`) interrupts the code rather than leaving it to run to its
// time limit while the session's next run waits behind it.
export async function runInSession(ctx: ToolCallContext, code: string, deps: BuiltinToolDeps, signal?: AbortSignal) {
  const options: ExecuteOptions = {};
  if (deps.executionTimeoutMs !== undefined) options.timeoutMs = deps.executionTimeoutMs;
  if (signal) options.signal = signal;
  return ctx.sandbox.executePython(backendContextOf(ctx), code, options);
}

export function createExecutePythonTool(deps: BuiltinToolDeps = {}) {
  return tool(
    async ({ code }, config) => {
      const ctx = toolCallContext(config);
      if (code.trim() === '') return toolFailure('Error: code is empty; pass the Python code to run.');
      return catchToolErrors(EXECUTE_PYTHON_TOOL_NAME, undefined, async () => renderExecution(await runInSession(ctx, code, deps, config?.signal)));
    },
    {
      name: EXECUTE_PYTHON_TOOL_NAME,
      description: EXECUTE_PYTHON_DESCRIPTION,
      schema: z.object({
        code: z.string().describe('The Python code to run. End with an expression (e.g. df.head()) to see its value.'),
      }),
      responseFormat: 'content_and_artifact',
    },
  );
}
