import { readFile, writeFile } from 'node:fs/promises';
import { buffer } from 'node:stream/consumers';
import { usageError } from './exit-codes.js';
import type { Io } from './io.js';
import { writeChunk } from './output.js';

// `-` means stdin / stdout, as in most Unix tools.
export const STDIO = '-';

// A local file the user named that cannot be read is a usage problem (exit 2), not the
// platform's.
export async function readLocal(path: string, io: Io): Promise<Buffer> {
  if (path === STDIO) return buffer(io.stdin);
  try {
    return await readFile(path);
  } catch (error) {
    throw usageError('LOCAL_FILE_UNREADABLE', `Cannot read ${path}: ${(error as Error).message}`);
  }
}

export async function readLocalText(path: string, io: Io): Promise<string> {
  return (await readLocal(path, io)).toString('utf8');
}

export async function writeLocal(path: string, data: Uint8Array, io: Io): Promise<void> {
  if (path === STDIO) return writeChunk(io.stdout, data);
  try {
    await writeFile(path, data);
  } catch (error) {
    throw usageError('LOCAL_FILE_UNWRITABLE', `Cannot write ${path}: ${(error as Error).message}`);
  }
}
