import type { StateFilesUpdate } from '../backends/backend-protocol.js';

// The artifact half of every built-in tool's `content_and_artifact` result. The model
// sees only the text; the tool node reads this: `isError` becomes the ToolMessage's
// status "error", `filesUpdate` (from state-backed routes) is merged into the graph's
// `files`, `execution` describes a Python run for clients.
export interface ToolArtifact {
  isError?: boolean;
  filesUpdate?: StateFilesUpdate;
  execution?: {
    id?: string;
    status: string;
    // What the run produced under /session/artifacts/ (artifact descriptors).
    artifacts?: unknown[];
  };
}

export type ToolResult = [text: string, artifact: ToolArtifact];

export function toolSuccess(text: string, artifact: ToolArtifact = {}): ToolResult {
  return [text, artifact];
}

export function toolFailure(text: string, artifact: ToolArtifact = {}): ToolResult {
  return [text, { ...artifact, isError: true }];
}

// Only a state-backed write has an update; an empty artifact stays empty.
export function withFilesUpdate(artifact: ToolArtifact, filesUpdate: StateFilesUpdate | undefined): ToolArtifact {
  return filesUpdate && Object.keys(filesUpdate).length > 0 ? { ...artifact, filesUpdate } : artifact;
}
