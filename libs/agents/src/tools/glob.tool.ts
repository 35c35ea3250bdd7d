import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { backendContextOf } from './backend-scope.js';
import { shownPath } from './tool-text.js';
import { toolCallContext } from './tool-context.js';
import type { BuiltinToolDeps } from './tool-deps.js';
import { toolSuccess } from './tool-artifact.js';
import { catchToolErrors } from './tool-errors.js';
import { GLOB_TOOL_NAME, MAX_LISTED_PATHS } from './tools.constants.js';

export const GLOB_DESCRIPTION = `Find files of this conversation's files by name pattern, at any depth. Returns absolute paths, one per line, sorted.
Patterns: * (any characters but /), ** (any folders), ? (one character), {a,b}, [abc]; e.g. "**/*.py", "data/*.csv", "*.{md,txt}". The pattern is relative to path unless it starts with /. Hidden files match too.`;

export function createGlobTool(deps: BuiltinToolDeps = {}) {
  const max = deps.maxListedPaths ?? MAX_LISTED_PATHS;
  return tool(
    async ({ pattern, path = '/' }, config) => {
      const ctx = toolCallContext(config);
      return catchToolErrors(GLOB_TOOL_NAME, path, async () => {
        const found = await ctx.backend.glob(backendContextOf(ctx), pattern, path);
        if (found.length === 0) return toolSuccess(`No files match ${JSON.stringify(pattern)} under ${shownPath(path)}.`);
        const lines = found.slice(0, max);
        if (found.length > max) lines.push(`[Showing the first ${max} of ${found.length} files; use a narrower pattern or path.]`);
        return toolSuccess(lines.join('\n'));
      });
    },
    {
      name: GLOB_TOOL_NAME,
      description: GLOB_DESCRIPTION,
      schema: z.object({
        pattern: z.string().describe('Glob pattern to match file paths against, e.g. "**/*.csv".'),
        path: z.string().optional().describe('Absolute path of the folder to search from (default "/", everything).'),
      }),
      responseFormat: 'content_and_artifact',
    },
  );
}
