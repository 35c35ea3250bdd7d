// Where a command reads and writes: the process's streams in main.ts, anything stream-like
// when a test drives the program in-process.
export type Output = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

export interface Io {
  stdout: Output;
  stderr: Output;
  stdin: NodeJS.ReadableStream;
  env: NodeJS.ProcessEnv;
}

export const processIo = (): Io => ({ stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env });
