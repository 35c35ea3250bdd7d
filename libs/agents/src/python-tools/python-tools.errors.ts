import { DrydockError } from '@drydock/core';

// Refusals of user-defined Python tools and of agent bundles. Messages are sentences a
// person (or a model) can act on; the code and status are stable and tests assert them.
export class PythonToolError extends DrydockError {
  static invalidModule(reason: string) {
    return new PythonToolError('INVALID_TOOL_MODULE', `Invalid Python tool module: ${reason}`, 400);
  }
  static moduleHashMismatch(name: string) {
    return new PythonToolError(
      'MODULE_HASH_MISMATCH',
      `The source of Python tool module ${JSON.stringify(name)} does not match its recorded SHA-256; it was changed or corrupted.`,
      422,
    );
  }
  static invalidFunctionName(name: string) {
    return new PythonToolError(
      'INVALID_TOOL_FUNCTION',
      `${JSON.stringify(name)} is not a public tool function name (ASCII letters, digits and underscores, starting with a letter, at most 64 characters).`,
      400,
    );
  }
  static invalidArguments(reason: string) {
    return new PythonToolError('INVALID_TOOL_ARGUMENTS', `Invalid tool arguments: ${reason}`, 400);
  }
  // The sandbox printed something that is not what our own script prints: tenant code
  // can reach that process, so its output is checked like any other input.
  static invalidOutput(what: string, reason: string) {
    return new PythonToolError('INVALID_SANDBOX_OUTPUT', `The sandbox returned an unreadable ${what}: ${reason}`, 502);
  }
  static scriptMissing(tried: string[]) {
    return new PythonToolError(
      'DERIVE_SCRIPT_MISSING',
      `derive_schema.py was not found (looked in ${tried.join(', ')}); the build must ship it beside the compiled code.`,
      500,
    );
  }
}

export class AgentBundleError extends DrydockError {
  static invalid(reason: string) {
    return new AgentBundleError('BUNDLE_INVALID', `This is not a valid Drydock agent bundle: ${reason}`, 400);
  }
  static unsupportedVersion(version: unknown) {
    return new AgentBundleError(
      'BUNDLE_UNSUPPORTED_VERSION',
      `This agent bundle has version ${JSON.stringify(version)}; this Drydock reads version 1 only.`,
      400,
    );
  }
  static moduleHashMismatch(name: string) {
    return new AgentBundleError(
      'BUNDLE_MODULE_HASH_MISMATCH',
      `The source of Python module ${JSON.stringify(name)} in this bundle does not match its SHA-256; the bundle was changed or corrupted after export.`,
      422,
      { module: name },
    );
  }
  static hashMismatch() {
    return new AgentBundleError(
      'BUNDLE_HASH_MISMATCH',
      'The agent definition in this bundle does not match the bundle SHA-256; the bundle was changed or corrupted after export.',
      422,
    );
  }
}
