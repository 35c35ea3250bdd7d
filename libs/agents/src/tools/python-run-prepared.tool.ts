import { tool } from '@langchain/core/tools';
import { isWithin, normalizePath } from '@drydock/vfs';
import { z } from 'zod';
import { pythonStringLiteral } from '../python-tools/python-literal.js';
import { backendContextOf } from './backend-scope.js';
import { runInSession } from './execute-python.tool.js';
import { extractedContent } from './extracted-content.js';
import { renderExecution } from './render-execution.js';
import { toolCallContext } from './tool-context.js';
import type { BuiltinToolDeps } from './tool-deps.js';
import { toolFailure, withFilesUpdate } from './tool-artifact.js';
import { catchToolErrors } from './tool-errors.js';
import { PYTHON_RUN_PREPARED_TOOL_NAME } from './tools.constants.js';

export const PYTHON_RUN_PREPARED_DESCRIPTION = `Save Python code from a fenced code block in your message to a file, then run that file in this conversation's persistent Python session.
Do NOT put the code in the arguments. Write it in your message as a \`\`\`python block, then call python_run_prepared with the file path to save it to and a short description. With several blocks in one message, name the file in the fence (\`\`\`python file=/scripts/clean.py) or order blocks as your calls.
The file runs like a script, but in the session's namespace: variables, imports and functions it defines stay available to later runs (execute_python too); __name__ is "__main__" and __file__ is its path. print() what you want to see: a script's last expression is not shown. Tracebacks name the file's lines, so you can fix it with edit_file and run it again with execute_python, e.g. exec(open("scripts/clean.py").read()).
The working directory is /session, which holds this conversation's files (/scripts/clean.py here is /session/scripts/clean.py to the code).`;

// The thread's root `/` is this folder in the session container (docs/architecture.md,
// "Sync with the session container"; SESSION_ROOT in libs/execution).
const SESSION_DIR = '/session';
// Files under it become artifacts and are removed from the session after each run.
const ARTIFACTS_DIR = '/artifacts';

// Seed 000: the code is saved to `file_path` and run in the session. It runs from the
// saved file, so what ran is exactly what the thread keeps, and tracebacks point at the
// file's own line numbers (read_file, edit_file). exec() in the session's globals rather
// than runpy: runpy runs in a fresh namespace, and the session's point is that names
// persist between runs. The cell is two statements and leaves only __file__ behind.
export function runFileCell(threadPath: string, sessionDir = SESSION_DIR): string {
  const path = pythonStringLiteral(`${sessionDir}${threadPath}`);
  return `__file__ = ${path}\nexec(compile(open(__file__, encoding="utf-8").read(), __file__, "exec"), globals())\n`;
}

export function createPythonRunPreparedTool(deps: BuiltinToolDeps = {}) {
  return tool(
    async ({ file_path }, config) => {
      const ctx = toolCallContext(config);
      const extracted = extractedContent(ctx);
      if ('error' in extracted) return toolFailure(extracted.error);
      return catchToolErrors(PYTHON_RUN_PREPARED_TOOL_NAME, file_path, async () => {
        const path = normalizePath(file_path);
        if (isWithin(path, ARTIFACTS_DIR)) {
          return toolFailure(
            `Error: ${path} cannot hold the script: files under /artifacts/ become downloadable artifacts and leave the ` +
              'session after each run. Save it elsewhere, e.g. /scripts/analysis.py.',
          );
        }
        // The sandbox's own files: the session sees this write before the code runs.
        const written = await ctx.sandbox.write(backendContextOf(ctx), path, extracted.content, { overwrite: true });
        const [text, artifact] = renderExecution(await runInSession(ctx, runFileCell(written.path), deps, config?.signal));
        const saved = `Saved the code to ${written.path} (${SESSION_DIR}${written.path} in the session) and ran it.`;
        return [`${saved}\n\n${text}`, withFilesUpdate(artifact, written.filesUpdate)];
      });
    },
    {
      name: PYTHON_RUN_PREPARED_TOOL_NAME,
      description: PYTHON_RUN_PREPARED_DESCRIPTION,
      schema: z.object({
        file_path: z
          .string()
          .describe('Absolute path to save the code to before running it, e.g. "/scripts/analysis.py". An existing file is replaced.'),
        description: z.string().describe('A short description of what the code does (the code itself goes in the fenced block).'),
      }),
      responseFormat: 'content_and_artifact',
    },
  );
}
