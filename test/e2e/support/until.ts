// Waits until `check` holds, asking every `everyMs`; fails the test after `timeoutMs`.
// The one poll loop of the end-to-end tests (each spec keeps its own defaults).
export async function pollUntil(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, everyMs = 100, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} not met in time`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
