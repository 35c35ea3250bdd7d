import type { StructuredToolInterface } from '@langchain/core/tools';
import { createDeleteFileTool } from './delete-file.tool.js';
import { createEditFileTool } from './edit-file.tool.js';
import { createExecuteTool } from './execute.tool.js';
import { createExecutePythonTool } from './execute-python.tool.js';
import { createFileWriteTool } from './file-write.tool.js';
import { createGlobTool } from './glob.tool.js';
import { createGrepTool } from './grep.tool.js';
import { createLsTool } from './ls.tool.js';
import { createPythonRunPreparedTool } from './python-run-prepared.tool.js';
import { createReadFileTool } from './read-file.tool.js';
import type { BuiltinToolDeps } from './tool-deps.js';
import { createWriteFileTool } from './write-file.tool.js';
import { BUILTIN_TOOL_NAMES, type BuiltinToolName } from './tools.constants.js';

// The agent's built-in tools. Each is built once at start-up and serves every tenant and
// thread: the caller's context comes with each call (tool-context.ts).
export * from './tools.constants.js';
export * from './tool-context.js';
export * from './tool-artifact.js';
export * from './tool-deps.js';
export { isModelFacingError, toolErrorText } from './tool-errors.js';
export { renderExecution } from './render-execution.js';
export { renderCommand } from './render-command.js';
export { NO_EXTRACTED_CONTENT_TEXT } from './extracted-content.js';
export { createExecuteTool, EXECUTE_DESCRIPTION } from './execute.tool.js';
export { createExecutePythonTool, EXECUTE_PYTHON_DESCRIPTION } from './execute-python.tool.js';
export { createPythonRunPreparedTool, PYTHON_RUN_PREPARED_DESCRIPTION, runFileCell } from './python-run-prepared.tool.js';
export { createLsTool, LS_DESCRIPTION } from './ls.tool.js';
export { createReadFileTool, READ_FILE_DESCRIPTION } from './read-file.tool.js';
export { createWriteFileTool, WRITE_FILE_DESCRIPTION } from './write-file.tool.js';
export { createFileWriteTool, FILE_WRITE_DESCRIPTION } from './file-write.tool.js';
export { createEditFileTool, EDIT_FILE_DESCRIPTION } from './edit-file.tool.js';
export { createGlobTool, GLOB_DESCRIPTION } from './glob.tool.js';
export { createGrepTool, GREP_DESCRIPTION, GREP_OUTPUT_MODES } from './grep.tool.js';
export { createDeleteFileTool, DELETE_FILE_DESCRIPTION } from './delete-file.tool.js';

const FACTORIES: Record<BuiltinToolName, (deps: BuiltinToolDeps) => StructuredToolInterface> = {
  execute_python: createExecutePythonTool,
  python_run_prepared: createPythonRunPreparedTool,
  execute: createExecuteTool,
  ls: createLsTool,
  read_file: createReadFileTool,
  write_file: createWriteFileTool,
  file_write: createFileWriteTool,
  edit_file: createEditFileTool,
  glob: createGlobTool,
  grep: createGrepTool,
  delete_file: createDeleteFileTool,
};

// One instance of every built-in tool, by name, in BUILTIN_TOOL_NAMES order.
export function createBuiltinTools(deps: BuiltinToolDeps = {}): Map<string, StructuredToolInterface> {
  return new Map(BUILTIN_TOOL_NAMES.map((name) => [name, FACTORIES[name](deps)]));
}
