import { tool } from '@langchain/core/tools';
import { VfsError } from '@drydock/vfs';
import { z } from 'zod';
import { backendContextOf } from './backend-scope.js';
import { plural, shownPath } from './tool-text.js';
import { toolCallContext } from './tool-context.js';
import type { BuiltinToolDeps } from './tool-deps.js';
import { toolFailure, toolSuccess, withFilesUpdate } from './tool-artifact.js';
import { catchToolErrors } from './tool-errors.js';
import { DELETE_FILE_TOOL_NAME } from './tools.constants.js';

export const DELETE_FILE_DESCRIPTION = `Delete a file of this conversation's files, or a folder and everything in it. This cannot be undone.
Python code sees the deletion too (from its next run).`;

// The deleted paths named in the result, at most this many.
const MAX_NAMED = 20;

export function createDeleteFileTool(_deps: BuiltinToolDeps = {}) {
  return tool(
    async ({ file_path }, config) => {
      const ctx = toolCallContext(config);
      return catchToolErrors(DELETE_FILE_TOOL_NAME, file_path, async () => {
        // Emptying the whole thread in one call is never what a model means to do.
        if (shownPath(file_path) === '/') {
          return toolFailure('Error: delete_file does not delete the top folder /; delete specific files or folders.');
        }
        const { deleted, filesUpdate } = await ctx.backend.delete(backendContextOf(ctx), file_path);
        const path = shownPath(file_path);
        if (deleted.length === 0) throw VfsError.fileNotFound(path);
        const artifact = withFilesUpdate({}, filesUpdate);
        if (deleted.length === 1 && deleted[0] === path) return toolSuccess(`Deleted ${path}.`, artifact);
        const named = deleted.slice(0, MAX_NAMED).map((p) => `- ${p}`);
        if (deleted.length > MAX_NAMED) named.push(`- ... and ${deleted.length - MAX_NAMED} more`);
        return toolSuccess(`Deleted the folder ${path} and the ${plural(deleted.length, 'file')} in it:\n${named.join('\n')}`, artifact);
      });
    },
    {
      name: DELETE_FILE_TOOL_NAME,
      description: DELETE_FILE_DESCRIPTION,
      schema: z.object({
        file_path: z.string().describe('Absolute path of the file or folder to delete, e.g. "/tmp/old.csv".'),
      }),
      responseFormat: 'content_and_artifact',
    },
  );
}
