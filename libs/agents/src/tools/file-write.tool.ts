import { tool } from '@langchain/core/tools';
import { countLines } from '@drydock/vfs';
import { z } from 'zod';
import { backendContextOf } from './backend-scope.js';
import { extractedContent } from './extracted-content.js';
import { toolCallContext } from './tool-context.js';
import type { BuiltinToolDeps } from './tool-deps.js';
import { toolFailure, toolSuccess, withFilesUpdate } from './tool-artifact.js';
import { catchToolErrors } from './tool-errors.js';
import { plural, sizeText } from './tool-text.js';
import { FILE_WRITE_TOOL_NAME } from './tools.constants.js';

export const FILE_WRITE_DESCRIPTION = `Write a file of this conversation's files from a fenced code block in your message: creates it, or replaces an existing file's whole content.
Do NOT put the content in the arguments. Write it in your message as a fenced block (\`\`\`csv ... \`\`\`), then call file_write with the path and a short description. With several blocks in one message, name the file in the fence (\`\`\`python file=/src/app.py) or order blocks as your calls.
Python code sees the file too: /data/a.csv here is /session/data/a.csv to the code.`;

export function createFileWriteTool(_deps: BuiltinToolDeps = {}) {
  return tool(
    async ({ file_path }, config) => {
      const ctx = toolCallContext(config);
      const extracted = extractedContent(ctx);
      if ('error' in extracted) return toolFailure(extracted.error);
      return catchToolErrors(FILE_WRITE_TOOL_NAME, file_path, async () => {
        const written = await ctx.backend.write(backendContextOf(ctx), file_path, extracted.content, { overwrite: true });
        const what = `${plural(countLines(extracted.content), 'line')}, ${sizeText(written.size)}`;
        const text = written.created ? `Created ${written.path} (${what}).` : `Replaced the content of ${written.path} (${what}).`;
        return toolSuccess(text, withFilesUpdate({}, written.filesUpdate));
      });
    },
    {
      name: FILE_WRITE_TOOL_NAME,
      description: FILE_WRITE_DESCRIPTION,
      schema: z.object({
        file_path: z.string().describe('Absolute path of the file to write, e.g. "/data/employees.csv". An existing file is replaced.'),
        description: z.string().describe('A short description of what the file holds (the content itself goes in the fenced block).'),
      }),
      responseFormat: 'content_and_artifact',
    },
  );
}
