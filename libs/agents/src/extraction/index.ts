// Content extraction for the agent's tool node: `python_run_prepared` and `file_write`
// take their code or file content from a fenced block in the model's own message,
// matched to the right tool call when the message makes several.
export { EXTRACTION_TOOL_NAMES, isExtractionTool, type ExtractionToolName } from './extraction.constants.js';
export { messageText, type MessageContentLike } from './message-text.js';
export { parseFencedBlocks, parseInfo, type FenceChar, type FencedBlock } from './fenced-blocks.js';
export {
  assignBlocksToCalls,
  samePath,
  type BlockAssignment,
  type ExtractionToolCall,
} from './block-assignment.js';
