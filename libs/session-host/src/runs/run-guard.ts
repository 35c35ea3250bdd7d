// Makes sure an execution's code runs at most once, whatever redelivers its job.
export interface RunGuard {
  // True for the first caller for this execution id, false for every later one.
  claim(executionId: string): Promise<boolean>;
}

export const RUN_GUARD = Symbol('RUN_GUARD');

export function runClaimKey(executionId: string): string {
  return `drydock:exec-claimed:${executionId}`;
}
