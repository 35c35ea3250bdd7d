import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import type { ExecuteOptions } from '../backends/backend-protocol.js';
import { backendContextOf } from './backend-scope.js';
import { renderCommand } from './render-command.js';
import { toolCallContext } from './tool-context.js';
import type { BuiltinToolDeps } from './tool-deps.js';
import { toolFailure } from './tool-artifact.js';
import { catchToolErrors } from './tool-errors.js';
import { EXECUTE_TOOL_NAME } from './tools.constants.js';

export const EXECUTE_DESCRIPTION = `Run a shell command in this conversation's sandbox. /bin/bash -c runs it in /session, which holds this conversation's files (the file tools' /src/app.py is /session/src/app.py, or src/app.py from there).
Returns what the command wrote (stdout, then stderr) followed by its exit code, e.g. "Exit code: 0". Each call is a new shell: cd, variables and background processes do not carry over to the next call (chain steps in one command with &&), and processes it leaves running are stopped when it returns. Each command has a time limit.
Files it writes under /session are the conversation's files afterwards (ls, read_file and grep see them); files written under /session/artifacts/ are kept as downloadable artifacts. It runs beside the Python session of execute_python and never touches its variables. Installed: coreutils, grep, sed, gawk, find, git, jq, sqlite3, zip/unzip, xz, file, ps and python3 (numpy, pandas, matplotlib, scipy, scikit-learn, statsmodels and the rest of the data-analysis set). There is no network unless the agent's definition allows hosts (your instructions then list them); a refused connection answers HTTP 403 with the reason.`;

// Seed 004's execute, over the sandbox backend's execute. Like execute_python it passes
// no idempotency key (tool call ids are not unique across turns and threads), and a
// cancelled run (`signal`) stops the command instead of leaving it to its time limit.
export function createExecuteTool(deps: BuiltinToolDeps = {}) {
  return tool(
    async ({ command, timeout_ms }, config) => {
      const ctx = toolCallContext(config);
      if (command.trim() === '') return toolFailure('Error: command is empty; pass the shell command to run, e.g. "ls -la".');
      const options: ExecuteOptions = {};
      const timeoutMs = timeout_ms ?? deps.executionTimeoutMs;
      if (timeoutMs !== undefined) options.timeoutMs = timeoutMs;
      if (config?.signal) options.signal = config.signal;
      return catchToolErrors(EXECUTE_TOOL_NAME, undefined, async () =>
        renderCommand(await ctx.sandbox.execute(backendContextOf(ctx), command, options)),
      );
    },
    {
      name: EXECUTE_TOOL_NAME,
      description: EXECUTE_DESCRIPTION,
      schema: z.object({
        command: z.string().describe('The shell command to run, e.g. "pytest -q tests/" or "grep -rn TODO src | head -50".'),
        timeout_ms: z
          .number()
          .int()
          .min(100)
          .optional()
          .describe("This command's time limit in milliseconds, for one you expect to run long; the sandbox's default (30 s unless configured) when absent, and never more than the tenant's maximum."),
      }),
      responseFormat: 'content_and_artifact',
    },
  );
}
