import * as fs from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TenantsRepository } from '@drydock/core';
import { InMemoryThreadFilesRepository, VfsService, type GrepOptions } from '@drydock/vfs';
import { makeConfig } from '../../../../test/factories/config.factory.js';
import type { Backend, BackendContext, StateFiles } from './backend-protocol.js';
import { FilesystemBackend } from './filesystem-backend.js';
import { mergeStateFiles, StateBackend } from './state-backend.js';
import { createThreadStoreBackend } from './store-backend.js';

// One search module (@drydock/vfs search/), so one answer: the same glob or grep on the
// same files gives the same result on every backend, the same refusals, and a regex
// that backtracks catastrophically is cut off everywhere.
const FILES: Record<string, string> = {
  '/src/app.py': 'import os\nimport sys\nprint("Hello")\n',
  '/src/.hidden.py': 'import secrets\n',
  '/src/lib/util.py': 'def helper():\n    return "hello world"\n',
  '/notes/readme.md': 'Hello\nhello world\nHELLO again\n',
  '/notes/long.txt': `${'a'.repeat(5000)}!\n`,
  [`/names/${'a'.repeat(200)}`]: 'a long name\n',
};
// Short, to keep the cut-off cases quick; the budget counts matching time only, so the
// ordinary cases stay well inside it on a busy machine.
const BUDGET_MS = 200;

interface Subject {
  name: string;
  backend: Backend;
  ctx: BackendContext;
}

async function subjects(tmp: string): Promise<Subject[]> {
  const tenants = { findById: async (id: string) => ({ id, name: id, limits: {}, createdAt: new Date(), updatedAt: new Date() }) };
  const vfs = new VfsService(new InMemoryThreadFilesRepository(undefined, BUDGET_MS), tenants as unknown as TenantsRepository, makeConfig());
  const base: BackendContext = { tenantId: 'ten_a', threadId: 'chat-1' };
  const store = createThreadStoreBackend(vfs);
  const state = new StateBackend({ regexBudgetMs: BUDGET_MS });
  const filesystem = new FilesystemBackend({ rootDir: tmp, regexBudgetMs: BUDGET_MS });
  let stateFiles: StateFiles = {};
  for (const [path, text] of Object.entries(FILES)) {
    await store.write(base, path, text);
    stateFiles = mergeStateFiles(stateFiles, (await state.write({ ...base, stateFiles }, path, text)).filesUpdate);
    await filesystem.write(base, path, text);
  }
  return [
    { name: 'store', backend: store, ctx: base },
    { name: 'state', backend: state, ctx: { ...base, stateFiles } },
    { name: 'filesystem', backend: filesystem, ctx: base },
  ];
}

async function outcome(promise: Promise<unknown>): Promise<unknown> {
  try {
    return await promise;
  } catch (error) {
    return { error: (error as { code?: string }).code };
  }
}

describe('search parity across backends', () => {
  let tmp: string;
  let all: Subject[];

  beforeAll(async () => {
    tmp = await fs.mkdtemp(join(tmpdir(), 'drydock-search-parity-'));
    all = await subjects(tmp);
  });

  afterAll(async () => {
    await fs.rm(tmp, { recursive: true, force: true });
  });

  const grepCases: [string, string, GrepOptions][] = [
    ['a literal', 'hello', {}],
    ['a literal, case-insensitive, as lines', 'hello', { caseInsensitive: true, outputMode: 'content' }],
    ['a regex with a word boundary', '\\bimport\\s+s', { regex: true, outputMode: 'content' }],
    ['a regex, counted', '^[A-Z]', { regex: true, outputMode: 'count' }],
    ['a regex under a path with a name glob', 'import', { path: '/src', glob: '*.py', outputMode: 'files_with_matches' }],
    ['a regex with a path glob', 'return', { regex: true, glob: 'src/**/*.py', outputMode: 'content' }],
    ['a limit', 'o', { maxMatches: 2, outputMode: 'content' }],
    ['a limit on files', 'import', { maxMatches: 1 }],
    ['a limit on counts', 'l', { maxMatches: 2, outputMode: 'count' }],
    ['a backreference (refused everywhere)', '(l)\\1', { regex: true }],
    ['an empty pattern', '', {}],
    ['a newline in a literal', 'a\nb', {}],
    ['an unknown mode', 'x', { outputMode: 'everything' as GrepOptions['outputMode'] }],
  ];

  it.each(grepCases)('should answer grep with %s the same on every backend', async (_name, pattern, options) => {
    const answers = await Promise.all(all.map((s) => outcome(s.backend.grep(s.ctx, pattern, options))));
    for (let i = 1; i < all.length; i++) expect([all[i]!.name, answers[i]]).toEqual([all[i]!.name, answers[0]]);
  });

  it.each([['**/*.py'], ['*.md'], ['/notes/*'], ['src/**'], ['**/.hidden.py'], ['{src,notes}/*.{py,md}'], ['[']])(
    'should answer glob %s the same on every backend',
    async (pattern) => {
      const answers = await Promise.all(all.map((s) => outcome(s.backend.glob(s.ctx, pattern, '/'))));
      for (let i = 1; i < all.length; i++) expect([all[i]!.name, answers[i]]).toEqual([all[i]!.name, answers[0]]);
    },
  );

  it('should include dotfiles in globs, as the VFS always did', async () => {
    for (const s of all) expect(await s.backend.glob(s.ctx, '**/*.py', '/')).toContain('/src/.hidden.py');
  });

  it('should still match a glob of many wildcards, through the bounded matcher', async () => {
    for (const s of all) expect([s.name, await s.backend.glob(s.ctx, '**/*d*n*.py', '/')]).toEqual([s.name, ['/src/.hidden.py']]);
  });

  it('should cut off a catastrophically backtracking glob on every backend, as glob and as grep filter', async () => {
    const glob = '**/*a*a*a*a*a*a*a*a*b';
    for (const s of all) {
      expect([s.name, await outcome(s.backend.glob(s.ctx, glob, '/'))]).toEqual([s.name, { error: 'SEARCH_TIMEOUT' }]);
      expect([s.name, await outcome(s.backend.grep(s.ctx, 'long', { glob }))]).toEqual([s.name, { error: 'SEARCH_TIMEOUT' }]);
    }
  });

  it('should cut off a catastrophically backtracking regex on every backend that matches in process', async () => {
    for (const s of all) {
      const started = Date.now();
      expect([s.name, await outcome(s.backend.grep(s.ctx, '^(a+)+$', { regex: true, path: '/notes' }))]).toEqual([
        s.name,
        { error: 'SEARCH_TIMEOUT' },
      ]);
      expect(Date.now() - started).toBeLessThan(5_000);
    }
  });
});
