// The names of the agent's built-in tools: what the model calls, what the tool node
// looks up, what agent definitions list. The two extraction tools share their names with
// the content extraction (extraction.constants.ts), which finds their fenced blocks.
// Seed 004's execute: a shell command in the thread's sandbox.
export const EXECUTE_TOOL_NAME = 'execute';
export const EXECUTE_PYTHON_TOOL_NAME = 'execute_python';
export const PYTHON_RUN_PREPARED_TOOL_NAME = 'python_run_prepared';
export const LS_TOOL_NAME = 'ls';
export const READ_FILE_TOOL_NAME = 'read_file';
export const WRITE_FILE_TOOL_NAME = 'write_file';
export const FILE_WRITE_TOOL_NAME = 'file_write';
export const EDIT_FILE_TOOL_NAME = 'edit_file';
export const GLOB_TOOL_NAME = 'glob';
export const GREP_TOOL_NAME = 'grep';
export const DELETE_FILE_TOOL_NAME = 'delete_file';

export const BUILTIN_TOOL_NAMES = [
  EXECUTE_PYTHON_TOOL_NAME,
  PYTHON_RUN_PREPARED_TOOL_NAME,
  EXECUTE_TOOL_NAME,
  LS_TOOL_NAME,
  READ_FILE_TOOL_NAME,
  WRITE_FILE_TOOL_NAME,
  FILE_WRITE_TOOL_NAME,
  EDIT_FILE_TOOL_NAME,
  GLOB_TOOL_NAME,
  GREP_TOOL_NAME,
  DELETE_FILE_TOOL_NAME,
] as const;

export type BuiltinToolName = (typeof BUILTIN_TOOL_NAMES)[number];

export function isBuiltinToolName(name: string): name is BuiltinToolName {
  return (BUILTIN_TOOL_NAMES as readonly string[]).includes(name);
}

// read_file's page (seed 004: offset 0, limit 500) and the most one call may ask for:
// read_file is never evicted, so one call must not fill the model's context.
export const DEFAULT_READ_LINES = 500;
export const MAX_READ_LINES = 2000;
// ls, glob and grep list at most this many paths; the model narrows the search.
export const MAX_LISTED_PATHS = 1000;
