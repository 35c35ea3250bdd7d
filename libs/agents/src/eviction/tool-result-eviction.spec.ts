import type { TenantsRepository } from '@drydock/core';
import { InMemoryThreadFilesRepository, VfsService } from '@drydock/vfs';
import { makeConfig } from '../../../../test/factories/config.factory.js';
import type { BackendContext } from '../backends/backend-protocol.js';
import { StateBackend } from '../backends/state-backend.js';
import { createThreadStoreBackend } from '../backends/store-backend.js';
import { BackendEvictionStore } from './backend-eviction-store.js';
import {
  DEFAULT_EVICTION_THRESHOLD_CHARS,
  evictToolResult,
  type EvictionStore,
  NEVER_EVICTED_TOOLS,
  pruneEvictedResults,
  sanitizeToolCallId,
  ToolResultEvictor,
} from './tool-result-eviction.js';

// 200 KB of numbered lines: `row 1 …` to `row 4000 …`, 50 characters each.
const bigResult = Array.from({ length: 4000 }, (_, i) => `row ${i + 1} `.padEnd(49, 'x')).join('\n');

function recordingWriter() {
  const written = new Map<string, string>();
  return { written, write: async (path: string, content: string) => void written.set(path, content) };
}

function memoryStore(files: { path: string; modifiedAt: Date }[] = []) {
  const entries = new Map(files.map((f) => [f.path, f.modifiedAt]));
  let clock = Math.max(0, ...files.map((f) => f.modifiedAt.getTime()));
  const store: EvictionStore = {
    write: async (path) => void entries.set(path, new Date(++clock)),
    list: async () => [...entries].map(([path, modifiedAt]) => ({ path, modifiedAt })),
    delete: async (path) => void entries.delete(path),
  };
  return { store, entries };
}

describe(evictToolResult.name, () => {
  it('should use the note\'s threshold: 20,000 tokens at 4 characters each', () => {
    expect(DEFAULT_EVICTION_THRESHOLD_CHARS).toBe(80_000);
  });

  it('should save a 200 KB result and replace it with a preview of its first and last lines and a pointer', async () => {
    expect(bigResult.length).toBeGreaterThan(199_000);
    const { written, write } = recordingWriter();
    const outcome = await evictToolResult({ toolName: 'execute_python', toolCallId: 'call_abc123', content: bigResult }, write);

    expect(outcome).toMatchObject({ evicted: true, path: '/large_tool_results/call_abc123' });
    expect(written.get('/large_tool_results/call_abc123')).toBe(bigResult);
    const preview = outcome.content;
    expect(preview.length).toBeLessThan(5_000);
    expect(preview).toContain('     1\trow 1 ');
    expect(preview).toContain('    10\trow 10 ');
    expect(preview).not.toContain('row 11 ');
    expect(preview).not.toContain('row 3990 ');
    expect(preview).toContain('  3991\trow 3991 ');
    expect(preview).toContain('  4000\trow 4000 ');
    expect(preview).toContain('3,980 lines omitted');
    expect(preview).toContain("read_file(file_path='/large_tool_results/call_abc123', offset=0, limit=500)");
  });

  it('should cut long lines in the preview', async () => {
    const { write } = recordingWriter();
    const oneLine = 'y'.repeat(200_000);
    const outcome = await evictToolResult({ toolName: 'fetch', toolCallId: 'c1', content: oneLine }, write, { maxLineChars: 100 });
    expect(outcome.content).toContain(`     1\t${'y'.repeat(100)}… [199,900 more characters]`);
    expect(outcome.content.length).toBeLessThan(1_000);
  });

  it.each([...NEVER_EVICTED_TOOLS])('should never evict the result of the file tool %s', async (toolName) => {
    const { written, write } = recordingWriter();
    const outcome = await evictToolResult({ toolName, toolCallId: 'c1', content: bigResult }, write);
    expect(outcome).toEqual({ evicted: false, content: bigResult });
    expect(written.size).toBe(0);
  });

  it('should leave results at or under the threshold alone', async () => {
    const { written, write } = recordingWriter();
    const content = 'z'.repeat(1000);
    expect(await evictToolResult({ toolName: 'x', toolCallId: 'c', content }, write, { thresholdChars: 1000 })).toEqual({
      evicted: false,
      content,
    });
    expect(written.size).toBe(0);
  });

  it('should still cut the result to its preview when saving fails', async () => {
    const outcome = await evictToolResult({ toolName: 'x', toolCallId: 'c', content: bigResult }, async () => {
      throw new Error('quota exceeded');
    });
    expect(outcome.evicted).toBe(false);
    expect(outcome.content.length).toBeLessThan(5_000);
    expect(outcome.content).toContain('could not be saved (quota exceeded)');
    expect(outcome.content).not.toContain('read_file');
  });
});

describe(sanitizeToolCallId.name, () => {
  it.each([
    ['call_abc-123.x', 'call_abc-123.x'],
    ['../../etc/passwd', '.._.._etc_passwd'],
    ['a/b\\c d\u0000é', 'a_b_c_d__'],
    ['', 'tool_result'],
    ['.', '_'],
    ['..', '__'],
  ])('should turn %j into %j', (id, expected) => {
    expect(sanitizeToolCallId(id)).toBe(expected);
  });

  it('should cap the length and keep long ids apart', () => {
    const a = sanitizeToolCallId(`${'a'.repeat(300)}1`);
    const b = sanitizeToolCallId(`${'a'.repeat(300)}2`);
    expect(a.length).toBeLessThanOrEqual(128);
    expect(a).toMatch(/^[A-Za-z0-9._-]+$/);
    expect(a).not.toBe(b);
  });
});

describe(pruneEvictedResults.name, () => {
  it('should delete the oldest results beyond the cap', async () => {
    const files = Array.from({ length: 5 }, (_, i) => ({ path: `/large_tool_results/c${i}`, modifiedAt: new Date(1000 + i) }));
    const { store, entries } = memoryStore(files);
    expect(await pruneEvictedResults(store, 3)).toEqual(['/large_tool_results/c0', '/large_tool_results/c1']);
    expect([...entries.keys()]).toEqual(['/large_tool_results/c2', '/large_tool_results/c3', '/large_tool_results/c4']);
  });

  it('should keep at most 50 per thread by default, never the one just written', async () => {
    const files = Array.from({ length: 50 }, (_, i) => ({ path: `/large_tool_results/old${i}`, modifiedAt: new Date(1000 + i) }));
    const { store, entries } = memoryStore(files);
    const sut = new ToolResultEvictor();
    const outcome = await sut.process({ toolName: 'fetch', toolCallId: 'new', content: bigResult }, store);
    expect(outcome.pruned).toEqual(['/large_tool_results/old0']);
    expect(entries.size).toBe(50);
    expect(entries.has('/large_tool_results/new')).toBe(true);
  });
});

describe(BackendEvictionStore.name, () => {
  const ctx: BackendContext = { tenantId: 'ten_a', threadId: 'chat-1' };

  it('should evict into the thread files and prune them there', async () => {
    const tenants: Pick<TenantsRepository, 'findById'> = {
      findById: async (id) => ({ id, name: id, limits: {}, createdAt: new Date(), updatedAt: new Date() }),
    };
    let clock = 0;
    const repo = new InMemoryThreadFilesRepository(() => new Date(++clock * 1000));
    const backend = createThreadStoreBackend(new VfsService(repo, tenants as TenantsRepository, makeConfig()));
    const sut = new ToolResultEvictor({ maxKept: 2 });
    for (const id of ['c1', 'c2', 'c3']) {
      await sut.process({ toolName: 'fetch', toolCallId: id, content: bigResult }, new BackendEvictionStore(backend, ctx));
    }
    expect(await backend.glob(ctx, '**')).toEqual(['/large_tool_results/c2', '/large_tool_results/c3']);
    expect(await backend.read(ctx, '/large_tool_results/c3', { offset: 3999 })).toMatchObject({ lines: [expect.stringMatching(/^row 4000 /)] });
  });

  it('should collect state updates when the backend keeps files in graph state', async () => {
    const store = new BackendEvictionStore(new StateBackend(), { ...ctx, stateFiles: {} });
    await new ToolResultEvictor().process({ toolName: 'fetch', toolCallId: 'c1', content: bigResult }, store);
    expect(Object.keys(store.filesUpdate)).toEqual(['/large_tool_results/c1']);
  });
});
