#!/usr/bin/env node
import { runCli } from './program.js';

// A reader that went away (`drydock batch results … | head`) is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

// exitCode, not process.exit(): output still queued for a pipe is flushed first.
process.exitCode = await runCli(process.argv.slice(2));
