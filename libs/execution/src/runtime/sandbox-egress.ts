import type { SandboxSpec } from './sandbox-runtime.js';

// The worker's egress proxy as the sandbox runtime sees it: for a sandbox with a network
// policy, the runtime asks for the proxy's end on a Unix socket in the sandbox's channel
// folder, and closes it with the sandbox (docs/decisions/017-egress-proxy.md).
export interface SandboxEgress {
  open(spec: SandboxSpec, socketPath: string, owner: { uid: number; gid: number }): Promise<{ close(): Promise<void> }>;
}

export const SANDBOX_EGRESS = Symbol('SANDBOX_EGRESS');
