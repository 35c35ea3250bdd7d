// The platform the Python SDK's tests and bench (bench/python-client) run against: a
// gateway and a worker booted in this process against the real PostgreSQL, Redis and
// Docker named by the environment (packages/python/scripts/test.sh sets the same values
// as scripts/test.sh). Prints one line `DRYDOCK_PLATFORM {"url", "adminKey", "workerId"}`
// once it listens, and stays up until its stdin closes (the Python harness holds it), then
// closes the apps and exits.
//
//   node <compiled>/packages/python/tests/platform.js
import { startInProcess } from '../../../bench/lib/harness.js';

async function main(): Promise<void> {
  const platform = await startInProcess();
  let closing = false;
  const close = async (code: number) => {
    if (closing) return;
    closing = true;
    try {
      await platform.close();
    } catch (error) {
      console.error(`closing the platform failed: ${(error as Error).message}`);
      code = code || 1;
    }
    process.exit(code);
  };
  process.stdin.on('end', () => void close(0));
  process.stdin.on('error', () => void close(0));
  process.stdin.resume();
  process.on('SIGTERM', () => void close(0));
  process.on('SIGINT', () => void close(0));
  process.stdout.write(`DRYDOCK_PLATFORM ${JSON.stringify({ url: platform.url, adminKey: platform.adminKey, workerId: platform.workerId })}\n`);
}

main().catch((error: unknown) => {
  console.error(`the platform did not start: ${(error as Error)?.stack ?? error}`);
  process.exit(1);
});
