import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { backendContextOf } from './backend-scope.js';
import { toolCallContext } from './tool-context.js';
import type { BuiltinToolDeps } from './tool-deps.js';
import { toolSuccess, withFilesUpdate } from './tool-artifact.js';
import { catchToolErrors } from './tool-errors.js';
import { EDIT_FILE_TOOL_NAME } from './tools.constants.js';

export const EDIT_FILE_DESCRIPTION = `Replace exact text in a text file of this conversation's files.
old_string must match the file exactly, whitespace and indentation included (copy it from read_file's output without the line-number prefix). It must occur exactly once unless replace_all is true; if it occurs several times, include more surrounding lines to make it unique.`;

export function createEditFileTool(_deps: BuiltinToolDeps = {}) {
  return tool(
    async ({ file_path, old_string, new_string, replace_all = false }, config) => {
      const ctx = toolCallContext(config);
      return catchToolErrors(EDIT_FILE_TOOL_NAME, file_path, async () => {
        const edited = await ctx.backend.edit(backendContextOf(ctx), file_path, old_string, new_string, replace_all);
        const n = edited.occurrences;
        const text =
          old_string === new_string
            ? `Nothing changed in ${edited.path}: old_string and new_string are the same.`
            : `Edited ${edited.path}: replaced ${n} occurrence${n === 1 ? '' : 's'}.`;
        return toolSuccess(text, withFilesUpdate({}, edited.filesUpdate));
      });
    },
    {
      name: EDIT_FILE_TOOL_NAME,
      description: EDIT_FILE_DESCRIPTION,
      schema: z.object({
        file_path: z.string().describe('Absolute path of the file to edit, e.g. "/src/app.py".'),
        old_string: z.string().describe('The exact text to replace, as it is in the file.'),
        new_string: z.string().describe('The text to put in its place (may be empty to delete old_string).'),
        replace_all: z
          .boolean()
          .optional()
          .describe('Replace every occurrence of old_string instead of requiring exactly one (default false).'),
      }),
      responseFormat: 'content_and_artifact',
    },
  );
}
