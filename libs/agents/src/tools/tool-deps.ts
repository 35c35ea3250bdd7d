// What a built-in tool factory may be given at start-up. Nothing here is about a caller:
// tenant, thread, backends and extracted content arrive with each call (tool-context.ts).
export interface BuiltinToolDeps {
  // The wall-clock limit asked for each Python run (the sandbox clamps it to the
  // tenant's maximum); the sandbox's default when absent.
  executionTimeoutMs?: number;
  // The most lines one read_file call returns (MAX_READ_LINES by default).
  maxReadLines?: number;
  // The most paths ls, glob and grep list (MAX_LISTED_PATHS by default).
  maxListedPaths?: number;
}
