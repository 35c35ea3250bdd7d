import { open } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { BatchItemInput } from '@drydock/client';
import { usageError } from './exit-codes.js';
import type { Io } from './io.js';
import { STDIO } from './local-files.js';

// Batch items from a JSON Lines file (or stdin), one at a time as the lines are read.
// Blank lines are skipped, as the platform does. Only the shape that the CLI cannot send
// is checked here (not JSON, not an object); the platform validates the rest and names the
// item's index.
export async function* readItems(path: string, io: Io): AsyncGenerator<BatchItemInput> {
  // Opened first so that a missing file is a clear usage error, not a stream error.
  const input = path === STDIO ? io.stdin : await openForReading(path);
  const lines = createInterface({ input, crlfDelay: Infinity });
  let number = 0;
  for await (const line of lines) {
    number++;
    if (!line.trim()) continue;
    let item: unknown;
    try {
      item = JSON.parse(line);
    } catch (error) {
      throw usageError('INVALID_ITEMS', `${path === STDIO ? 'stdin' : path} line ${number}: not JSON (${(error as Error).message})`);
    }
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      throw usageError('INVALID_ITEMS', `${path === STDIO ? 'stdin' : path} line ${number}: an item is an object like {"code": "print(1)"}`);
    }
    yield item as BatchItemInput;
  }
}

async function openForReading(path: string): Promise<NodeJS.ReadableStream> {
  try {
    return (await open(path)).createReadStream();
  } catch (error) {
    throw usageError('LOCAL_FILE_UNREADABLE', `Cannot read ${path}: ${(error as Error).message}`);
  }
}
