import { VfsError } from '@drydock/vfs';
import { BackendError } from '../backends/backend.errors.js';
import { shownPath } from './tool-text.js';
import { EDIT_FILE_TOOL_NAME, WRITE_FILE_TOOL_NAME } from './tools.constants.js';
import { toolFailure, type ToolResult } from './tool-artifact.js';

// Failures the model can act on come back to it as text (a ToolMessage with status
// "error"), never as exceptions: a wrong path, an existing file, an ambiguous edit, a bad
// pattern. The typed errors' messages are already sentences naming the path; the hint
// says what to do next with these tools. Everything else (the database is down, the
// tool ran outside an agent run, a backend is misconfigured) is the operator's problem
// and is re-thrown.

const HINTS: Record<string, string> = {
  INVALID_PATH: 'Use an absolute path such as /data/report.csv.',
  FILE_NOT_FOUND: 'Check the path with ls or glob.',
  IS_A_DIRECTORY: 'List it with ls, or name a file inside it.',
  NOT_A_TEXT_FILE: 'Work with it from Python (execute_python) instead.',
  AMBIGUOUS_MATCH: `To replace every occurrence, call ${EDIT_FILE_TOOL_NAME} with replace_all set to true.`,
};

// Every VfsError code is about the call's own input or the thread's files; of the
// backend's refusals, only a bad configuration is not.
const NOT_MODEL_FACING = new Set(['INVALID_BACKEND_CONFIG']);

export function isModelFacingError(error: unknown): error is VfsError | BackendError {
  return (error instanceof VfsError || error instanceof BackendError) && !NOT_MODEL_FACING.has(error.code);
}

// The text the model gets for a model-facing error raised while `toolName` worked on
// `path` (the path as the call gave it, for messages the tool words itself).
export function toolErrorText(error: VfsError | BackendError, toolName: string, path?: string): string {
  if (toolName === WRITE_FILE_TOOL_NAME && error.code === 'FILE_EXISTS' && error.details?.ancestor === undefined) {
    return (
      `Error: ${path === undefined ? 'The file' : shownPath(path)} already exists; write_file only creates new files. ` +
      'Read it and change it with edit_file, replace all of it with file_write, or choose a new path.'
    );
  }
  const hint = HINTS[error.code];
  return hint ? `Error: ${error.message} ${hint}` : `Error: ${error.message}`;
}

// Runs one tool call, turning model-facing errors into an error result.
export async function catchToolErrors(toolName: string, path: string | undefined, run: () => Promise<ToolResult>): Promise<ToolResult> {
  try {
    return await run();
  } catch (error) {
    if (!isModelFacingError(error)) throw error;
    return toolFailure(toolErrorText(error, toolName, path));
  }
}
