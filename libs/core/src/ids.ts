import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

// Prefixed, URL-safe random ids (`ses_…`, `exe_…`): readable in logs and impossible to
// guess, 100 bits of entropy.
export function newId(prefix: string): string {
  const bytes = randomBytes(20);
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
