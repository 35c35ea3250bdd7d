// Tools whose code or file content travels in a fenced block of the model's own message
// text rather than in their arguments (large strings in tool-call JSON break
// serialisation and parameter validation). Their arguments are only `file_path` and
// `description`.
export const EXTRACTION_TOOL_NAMES = ['python_run_prepared', 'file_write'] as const;

export type ExtractionToolName = (typeof EXTRACTION_TOOL_NAMES)[number];

export function isExtractionTool(name: string): name is ExtractionToolName {
  return (EXTRACTION_TOOL_NAMES as readonly string[]).includes(name);
}
