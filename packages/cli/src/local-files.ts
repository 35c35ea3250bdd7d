import { open, readFile } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
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

// A local file to upload, read as it is sent (never whole in memory). Opened here, so a
// file that cannot be read is exit 2 before anything is sent.
export async function openLocal(path: string, io: Io): Promise<AsyncIterable<Uint8Array>> {
  if (path === STDIO) return io.stdin as AsyncIterable<Uint8Array>;
  try {
    const handle = await open(path, 'r');
    if ((await handle.stat()).isDirectory()) {
      await handle.close();
      throw new Error('it is a folder');
    }
    return handle.createReadStream();
  } catch (error) {
    throw usageError('LOCAL_FILE_UNREADABLE', `Cannot read ${path}: ${(error as Error).message}`);
  }
}

// A download written as it arrives, to a local file or stdout; resolves to the bytes
// written. The file is opened before the first byte is read, so a place that cannot be
// written is exit 2, not a half-read download.
export async function writeLocalStream(path: string, stream: ReadableStream<Uint8Array>, io: Io): Promise<number> {
  let size = 0;
  async function* counted() {
    for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      yield chunk;
    }
  }
  if (path === STDIO) {
    for await (const chunk of counted()) await writeChunk(io.stdout, chunk);
    return size;
  }
  let handle;
  try {
    handle = await open(path, 'w');
  } catch (error) {
    await stream.cancel().catch(() => undefined);
    throw usageError('LOCAL_FILE_UNWRITABLE', `Cannot write ${path}: ${(error as Error).message}`);
  }
  await pipeline(counted(), handle.createWriteStream());
  return size;
}
