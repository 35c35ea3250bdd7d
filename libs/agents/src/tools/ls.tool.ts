import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { backendContextOf } from './backend-scope.js';
import { shownPath, sizeText } from './tool-text.js';
import { toolCallContext } from './tool-context.js';
import type { BuiltinToolDeps } from './tool-deps.js';
import { toolSuccess } from './tool-artifact.js';
import { catchToolErrors } from './tool-errors.js';
import { LS_TOOL_NAME, MAX_LISTED_PATHS } from './tools.constants.js';

export const LS_DESCRIPTION = `List the files and folders directly inside a folder of this conversation's files.
One entry per line: folders end with "/", files show their size. Paths are absolute ("/" is the top). Use glob to find files at any depth.`;

export function createLsTool(deps: BuiltinToolDeps = {}) {
  const max = deps.maxListedPaths ?? MAX_LISTED_PATHS;
  return tool(
    async ({ path = '/' }, config) => {
      const ctx = toolCallContext(config);
      return catchToolErrors(LS_TOOL_NAME, path, async () => {
        const entries = await ctx.backend.ls(backendContextOf(ctx), path);
        if (entries.length === 0) return toolSuccess(`${shownPath(path)} is empty.`);
        const lines = entries
          .slice(0, max)
          .map((e) => (e.type === 'directory' ? `${e.path}/` : `${e.path} (${sizeText(e.size)})`));
        if (entries.length > max) lines.push(`[Showing the first ${max} of ${entries.length} entries; list a narrower folder or use glob.]`);
        return toolSuccess(lines.join('\n'));
      });
    },
    {
      name: LS_TOOL_NAME,
      description: LS_DESCRIPTION,
      schema: z.object({
        path: z.string().optional().describe('Absolute path of the folder to list, e.g. "/data" (default "/", the top folder).'),
      }),
      responseFormat: 'content_and_artifact',
    },
  );
}
