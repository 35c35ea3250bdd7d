import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import type { ReadResult } from '../backends/backend-protocol.js';
import { backendContextOf } from './backend-scope.js';
import { toolCallContext } from './tool-context.js';
import type { BuiltinToolDeps } from './tool-deps.js';
import { toolFailure, toolSuccess, type ToolResult } from './tool-artifact.js';
import { catchToolErrors } from './tool-errors.js';
import { plural, sizeText } from './tool-text.js';
import { DEFAULT_READ_LINES, MAX_READ_LINES, READ_FILE_TOOL_NAME } from './tools.constants.js';

export const READ_FILE_DESCRIPTION = `Read a text file of this conversation's files, with line numbers (cat -n style: the number, a tab, the line).
Returns up to ${DEFAULT_READ_LINES} lines by default, starting at offset (0 = the first line); when more lines remain, the end of the result says which offset to read next. Lines over 2000 characters are split into numbered continuation rows (12.1, 12.2, ...).
Read a file before editing it. Binary files (images, spreadsheets, archives) cannot be read here: open them from Python.`;

export function createReadFileTool(deps: BuiltinToolDeps = {}) {
  const maxLines = deps.maxReadLines ?? MAX_READ_LINES;
  return tool(
    async ({ file_path, offset = 0, limit = DEFAULT_READ_LINES }, config) => {
      const ctx = toolCallContext(config);
      return catchToolErrors(READ_FILE_TOOL_NAME, file_path, async () => {
        const read = await ctx.backend.read(backendContextOf(ctx), file_path, { offset, limit: Math.min(limit, maxLines) });
        return readResultText(read);
      });
    },
    {
      name: READ_FILE_TOOL_NAME,
      description: READ_FILE_DESCRIPTION,
      schema: z.object({
        file_path: z.string().describe('Absolute path of the file to read, e.g. "/data/notes.md".'),
        offset: z
          .number()
          .int()
          .min(0)
          .optional()
          .describe('0-based line to start from (default 0, the first line). To continue a long file, pass the offset the previous result named.'),
        limit: z
          .number()
          .int()
          .min(1)
          .optional()
          .describe(`How many lines to return (default ${DEFAULT_READ_LINES}, at most ${MAX_READ_LINES}).`),
      }),
      responseFormat: 'content_and_artifact',
    },
  );
}

export function readResultText(read: ReadResult): ToolResult {
  switch (read.kind) {
    case 'empty':
      return toolSuccess(`${read.path} is empty.`);
    case 'binary':
      return toolFailure(
        `Error: ${read.path} is a binary file (${read.contentType}, ${sizeText(read.size)}); read_file shows text only. ` +
          'Open it from Python (execute_python) instead.',
      );
    case 'past_end':
      return toolFailure(
        `Error: ${read.path} has ${plural(read.totalLines, 'line')}; offset ${read.offset} is past its end ` +
          `(offsets start at 0). Read from an offset below ${read.totalLines}.`,
      );
    case 'text': {
      if (!read.more) return toolSuccess(read.numbered);
      const next = read.offset + read.lines.length;
      return toolSuccess(
        `${read.numbered}\n\n[Lines ${read.offset + 1}-${next} of ${read.totalLines}. ` +
          `To read on, call read_file with offset=${next}.]`,
      );
    }
  }
}
