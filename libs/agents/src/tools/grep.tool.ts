import { tool } from '@langchain/core/tools';
import type { GrepResult } from '@drydock/vfs';
import { z } from 'zod';
import { backendContextOf } from './backend-scope.js';
import { shownPath } from './tool-text.js';
import { toolCallContext } from './tool-context.js';
import type { BuiltinToolDeps } from './tool-deps.js';
import { toolSuccess } from './tool-artifact.js';
import { catchToolErrors } from './tool-errors.js';
import { GREP_TOOL_NAME, MAX_LISTED_PATHS } from './tools.constants.js';

export const GREP_DESCRIPTION = `Search the text of this conversation's files for a pattern, line by line (binary files are skipped).
The pattern is literal text by default; set regex to true for a regular expression (JavaScript syntax, no backreferences).
output_mode: "files_with_matches" (default) lists the paths of files that match; "content" lists matching lines as path:line:text; "count" gives path: number of matching lines. Narrow the search with path (a folder or file) and glob (e.g. "*.py", or "src/**/*.ts" relative to path).`;

export const GREP_OUTPUT_MODES = ['files_with_matches', 'content', 'count'] as const;

export function createGrepTool(deps: BuiltinToolDeps = {}) {
  const max = deps.maxListedPaths ?? MAX_LISTED_PATHS;
  return tool(
    async ({ pattern, path = '/', glob, output_mode = 'files_with_matches', regex = false }, config) => {
      const ctx = toolCallContext(config);
      return catchToolErrors(GREP_TOOL_NAME, path, async () => {
        const found = await ctx.backend.grep(backendContextOf(ctx), pattern, {
          path,
          glob: glob || undefined,
          outputMode: output_mode,
          regex,
          maxMatches: max,
        });
        const lines = grepLines(found);
        if (lines.length === 0) {
          const where = glob ? `${shownPath(path)} (files matching ${JSON.stringify(glob)})` : shownPath(path);
          return toolSuccess(`No matches for ${JSON.stringify(pattern)} under ${where}.`);
        }
        if (found.truncated) lines.push(`[${found.note ?? 'More matches were left out; narrow the search with path or glob.'}]`);
        return toolSuccess(lines.join('\n'));
      });
    },
    {
      name: GREP_TOOL_NAME,
      description: GREP_DESCRIPTION,
      schema: z.object({
        pattern: z.string().describe('The text to search for (a regular expression when regex is true).'),
        path: z.string().optional().describe('Absolute path of the folder or file to search (default "/", everything).'),
        glob: z
          .string()
          .optional()
          .describe('Only search files whose name matches this glob, e.g. "*.py"; a glob with / is matched against the path relative to path.'),
        output_mode: z
          .enum(GREP_OUTPUT_MODES)
          .optional()
          .describe('"files_with_matches" (paths only, default), "content" (path:line:text for each matching line) or "count" (matching lines per file).'),
        regex: z.boolean().optional().describe('Treat pattern as a regular expression instead of literal text (default false).'),
      }),
      responseFormat: 'content_and_artifact',
    },
  );
}

function grepLines(found: GrepResult): string[] {
  switch (found.mode) {
    case 'content':
      return (found.matches ?? []).map((m) => `${m.path}:${m.line}:${m.text}`);
    case 'count':
      return (found.counts ?? []).map((c) => `${c.path}: ${c.count}`);
    default:
      return [...(found.files ?? [])];
  }
}
