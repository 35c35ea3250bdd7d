import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const ID_BYTES = 20;

// Random bytes for ids come from a pool filled 4 KiB at a time, as Node does for
// randomUUID: each OpenSSL RAND_bytes call has a fixed cost far above 20 bytes' worth
// (two per execution were 1.4 % of the gateway's CPU under load). Every byte is used
// once; the pool is the same CSPRNG's output.
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let used = POOL_BYTES;

function randomId(): Buffer {
  if (used + ID_BYTES > POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  const bytes = pool.subarray(used, used + ID_BYTES);
  used += ID_BYTES;
  return bytes;
}

// Prefixed, URL-safe random ids (`ses_…`, `exe_…`): readable in logs and impossible to
// guess, 100 bits of entropy.
export function newId(prefix: string): string {
  const bytes = randomId();
  let out = '';
  for (const byte of bytes) out += ALPHABET[byte & 31];
  return `${prefix}_${out}`;
}

const ID_PATTERN = /^[a-z]{2,4}_[0-9a-z]{20}$/;
export function isId(value: string, prefix: string): boolean {
  return ID_PATTERN.test(value) && value.startsWith(`${prefix}_`);
}

// Thread ids are chosen by clients (LangGraph's thread_id); they appear in URLs and keys.
export const THREAD_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
export const THREAD_ID_RULE = '1-128 characters of letters, digits, _ . : - starting with a letter or digit';
