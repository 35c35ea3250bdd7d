import type { ToolCallContext } from './tool-context.js';

// python_run_prepared and file_write take their code or content from the fenced block
// the tool node assigned to the call. When there is none, the tool does nothing and the
// model gets the reason (the assignment's own sentence, or this one).
export const NO_EXTRACTED_CONTENT_TEXT =
  'Error: No fenced code block was found for this call. Put the content in a fenced block (``` ... ```) in the same ' +
  'message as the tool call, then call the tool again.';

export function extractedContent(ctx: ToolCallContext): { content: string } | { error: string } {
  const extracted = ctx.extracted;
  if (extracted && 'content' in extracted && typeof extracted.content === 'string') return { content: extracted.content };
  if (extracted && 'error' in extracted && typeof extracted.error === 'string' && extracted.error.trim() !== '') {
    return { error: extracted.error.startsWith('Error') ? extracted.error : `Error: ${extracted.error}` };
  }
  return { error: NO_EXTRACTED_CONTENT_TEXT };
}
