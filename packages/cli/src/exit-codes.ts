// The exit codes are a contract with shell scripts (docs/cli.md#exit-codes): never
// renumber them.
export const ExitCode = {
  Ok: 0,
  // The code ran and failed: a Python error, a timeout, a batch with failed items.
  Failed: 1,
  // Bad arguments or usage; also local input the CLI cannot read.
  Usage: 2,
  // The platform answered an error, or could not be reached.
  Platform: 3,
  // No API key (or admin key), or a malformed URL.
  Config: 4,
  // Ctrl-C while waiting (the usual 128 + SIGINT).
  Interrupted: 130,
} as const;

// An error the CLI reports itself, with the exit code and a stable code for --json.
export class CliError extends Error {
  constructor(
    readonly exitCode: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const usageError = (code: string, message: string) => new CliError(ExitCode.Usage, code, message);
