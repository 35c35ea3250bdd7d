import { z } from 'zod';
import type { AppConfig } from '@drydock/core';
import { normalizePath, VfsError } from '@drydock/vfs';
import type { BatchItemInput } from './batch.types.js';
import { BatchesError } from './batches.errors.js';

// The checks of a submitted batch, shared by its JSON and NDJSON forms. Unknown fields
// are refused, so a typo ("timeout" for "timeoutMs") is an error instead of a default.

const limits = z
  .object({
    memoryMb: z.number().int().min(32).max(1_048_576).optional(),
    cpus: z.number().min(0.05).max(256).optional(),
    timeoutMs: z.number().int().min(100).max(86_400_000).optional(),
  })
  .strict();

export const batchOptionsSchema = z
  .object({
    limits: limits.optional(),
    timeoutMs: z.number().int().min(100).max(86_400_000).optional(),
    concurrency: z.number().int().min(1).max(10_000).optional(),
    // A template ("name" or "name:version") every item's sandbox starts from.
    template: z.string().min(1).max(80).optional(),
    // The hosts every item may reach: false or {"allow": [...]}, read by the caller's
    // NetworkOptionReader (its shape) and checked against the tenant's ceiling.
    network: z.unknown().optional(),
    idempotencyKey: z.string().min(1).max(200).optional(),
    metadata: z
      .record(z.string(), z.unknown())
      .optional()
      .refine((m) => m === undefined || JSON.stringify(m).length <= 16 * 1024, 'must be at most 16 KiB of JSON'),
  })
  .strict();

export type BatchOptions = z.infer<typeof batchOptionsSchema>;

export function parseBatchOptions(raw: unknown): BatchOptions {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw BatchesError.invalidOptions('they must be a JSON object');
  const parsed = batchOptionsSchema.safeParse(raw);
  if (!parsed.success) throw BatchesError.invalidOptions(describeIssue(parsed.error.issues[0]!));
  return parsed.data;
}

export type ItemRules = Pick<AppConfig['batches'], 'maxCodeBytes' | 'maxItemFiles' | 'maxItemFileBytes'>;

const ITEM_KEYS = new Set(['code', 'files', 'id']);

// One item, checked; throws INVALID_BATCH_ITEM naming the item's index and field.
export function parseBatchItem(raw: unknown, index: number, rules: ItemRules): BatchItemInput {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw BatchesError.invalidItem(index, 'it must be a JSON object like {"code": "print(1)"}');
  }
  const item = raw as Record<string, unknown>;
  for (const key of Object.keys(item)) {
    if (!ITEM_KEYS.has(key)) throw BatchesError.invalidItem(index, `unknown field "${key}" (an item has code, files and id)`, key);
  }
  if (typeof item.code !== 'string') throw BatchesError.invalidItem(index, '"code" must be a string', 'code');
  if (Buffer.byteLength(item.code, 'utf8') > rules.maxCodeBytes) {
    throw BatchesError.invalidItem(index, `"code" is longer than ${rules.maxCodeBytes} bytes`, 'code');
  }
  const parsed: BatchItemInput = { code: item.code };
  if (item.id !== undefined) {
    if (typeof item.id !== 'string' || item.id.length === 0 || item.id.length > 200) {
      throw BatchesError.invalidItem(index, '"id" must be a string of 1 to 200 characters', 'id');
    }
    parsed.id = item.id;
  }
  if (item.files !== undefined) parsed.files = parseFiles(item.files, index, rules);
  return parsed;
}

// {"/path": "text"}: paths as thread paths are checked (absolute, no `..`), never under
// /artifacts (that folder is the item's output).
function parseFiles(raw: unknown, index: number, rules: ItemRules): Record<string, string> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw BatchesError.invalidItem(index, '"files" must be an object of {"/path": "text"}', 'files');
  }
  const entries = Object.entries(raw as Record<string, unknown>);
  if (entries.length > rules.maxItemFiles) {
    throw BatchesError.invalidItem(index, `"files" holds more than ${rules.maxItemFiles} files`, 'files');
  }
  const files: Record<string, string> = {};
  let bytes = 0;
  for (const [path, content] of entries) {
    let normalized: string;
    try {
      normalized = normalizePath(path);
    } catch (error) {
      const why = error instanceof VfsError ? error.message : 'it is not a valid path';
      throw BatchesError.invalidItem(index, `file path ${JSON.stringify(path)} is not valid: ${why}`, 'files');
    }
    if (normalized === '/' || normalized === '/artifacts' || normalized.startsWith('/artifacts/')) {
      throw BatchesError.invalidItem(index, `file path ${JSON.stringify(path)} is not allowed (/artifacts/ is where an item's output goes)`, 'files');
    }
    if (typeof content !== 'string') throw BatchesError.invalidItem(index, `file ${JSON.stringify(path)} must be given as text`, 'files');
    if (files[normalized] !== undefined) throw BatchesError.invalidItem(index, `file path ${JSON.stringify(path)} is named twice`, 'files');
    bytes += Buffer.byteLength(content, 'utf8');
    if (bytes > rules.maxItemFileBytes) {
      throw BatchesError.invalidItem(index, `its files hold more than ${rules.maxItemFileBytes} bytes`, 'files');
    }
    files[normalized] = content;
  }
  return files;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const where = issue.path.length ? `"${issue.path.join('.')}"` : 'the options';
  if (issue.code === 'unrecognized_keys') return `unknown field ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
  return `${where} ${issue.message.replace(/^Invalid input: /, '').replace(/^./, (c) => c.toLowerCase())}`;
}
