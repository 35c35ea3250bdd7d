import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { backendContextOf } from './backend-scope.js';
import { toolCallContext } from './tool-context.js';
import type { BuiltinToolDeps } from './tool-deps.js';
import { toolSuccess, withFilesUpdate } from './tool-artifact.js';
import { catchToolErrors } from './tool-errors.js';
import { sizeText } from './tool-text.js';
import { WRITE_FILE_TOOL_NAME } from './tools.constants.js';

export const WRITE_FILE_DESCRIPTION = `Create a new text file in this conversation's files with the given content. Missing folders are created.
It refuses to overwrite an existing file: change one with edit_file, or replace its whole content with file_write. For long content, prefer file_write (the content goes in a fenced block of your message instead of the arguments).
Python code sees the file too: /data/a.csv here is /session/data/a.csv to the code.`;

// deps unused: kept so every factory has the same shape.
export function createWriteFileTool(_deps: BuiltinToolDeps = {}) {
  return tool(
    async ({ file_path, content }, config) => {
      const ctx = toolCallContext(config);
      return catchToolErrors(WRITE_FILE_TOOL_NAME, file_path, async () => {
        const written = await ctx.backend.write(backendContextOf(ctx), file_path, content, { overwrite: false });
        return toolSuccess(`Created ${written.path} (${sizeText(written.size)}).`, withFilesUpdate({}, written.filesUpdate));
      });
    },
    {
      name: WRITE_FILE_TOOL_NAME,
      description: WRITE_FILE_DESCRIPTION,
      schema: z.object({
        file_path: z.string().describe('Absolute path of the new file, e.g. "/reports/summary.md". It must not exist yet.'),
        content: z.string().describe('The complete text of the file.'),
      }),
      responseFormat: 'content_and_artifact',
    },
  );
}
