import { assertTenant } from '@drydock/core';
import type {
  DirectoryEntryRecord,
  FileBody,
  LineMatch,
  LineMatcher,
  PathRange,
  PathRecord,
  TextEdit,
  ThreadChanges,
  ThreadFileRecord,
  ThreadFilesRepository,
  WritePolicy,
} from './thread-files.repository.js';
import { lineScanner } from './search/text-grep.js';
import { MAX_LINE_CHARS, splitLines } from './vfs-lines.js';
import { ancestorsOf, evenCuts, isWithin } from './vfs-path.js';
import { planWrite, type WriteState } from './vfs-write-rules.js';

interface Row {
  record: ThreadFileRecord;
  text: string | null;
  bytes: Buffer | null;
  deleted: boolean;
}

const byPath = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

// The storage port in memory, with the same write rules (vfs-write-rules.ts) as the
// PostgreSQL implementation: for unit tests of the service and of its callers.
export class InMemoryThreadFilesRepository implements ThreadFilesRepository {
  private readonly threads = new Map<string, Map<string, Row>>();
  private readonly revisions = new Map<string, number>();
  private readonly storage = new Map<string, number>();

  constructor(
    private readonly now: () => Date = () => new Date(),
    // The time a regex may take to match here (PostgreSQL's statement timeout in production).
    private readonly regexBudgetMs?: number,
  ) {}

  // Test helper: the tenant's stored bytes as the quota sees them.
  storedBytes(tenantId: string): number {
    return this.storage.get(tenantId) ?? 0;
  }

  private rows(tenantId: string, threadId: string): Map<string, Row> {
    assertTenant(tenantId);
    const key = `${tenantId}\u0000${threadId}`;
    let rows = this.threads.get(key);
    if (!rows) this.threads.set(key, (rows = new Map()));
    return rows;
  }

  private live(tenantId: string, threadId: string): Row[] {
    return [...this.rows(tenantId, threadId).values()]
      .filter((r) => !r.deleted)
      .sort((a, b) => byPath(a.record.path, b.record.path));
  }

  private bump(tenantId: string, threadId: string): number {
    const key = `${tenantId}\u0000${threadId}`;
    const revision = (this.revisions.get(key) ?? 0) + 1;
    this.revisions.set(key, revision);
    return revision;
  }

  async stat(tenantId: string, threadId: string, path: string): Promise<PathRecord | null> {
    const file = this.rows(tenantId, threadId).get(path);
    if (file && !file.deleted) return { type: 'file', file: { ...file.record } };
    const beneath = this.live(tenantId, threadId).filter((r) => r.record.path !== path && isWithin(r.record.path, path));
    if (beneath.length === 0 && path !== '/') return null;
    const latest = beneath.reduce<Date | null>((m, r) => (!m || r.record.modifiedAt > m ? r.record.modifiedAt : m), null);
    return { type: 'directory', modifiedAt: latest };
  }

  async list(tenantId: string, threadId: string, dir: string): Promise<DirectoryEntryRecord[]> {
    const prefix = dir === '/' ? '/' : `${dir}/`;
    const entries = new Map<string, DirectoryEntryRecord>();
    for (const { record } of this.live(tenantId, threadId)) {
      if (!record.path.startsWith(prefix)) continue;
      const rest = record.path.slice(prefix.length);
      const slash = rest.indexOf('/');
      const path = prefix + (slash === -1 ? rest : rest.slice(0, slash));
      const seen = entries.get(path);
      if (slash === -1) {
        entries.set(path, { path, type: 'file', size: record.size, modifiedAt: record.modifiedAt });
      } else if (!seen || record.modifiedAt > seen.modifiedAt) {
        entries.set(path, { path, type: 'directory', size: 0, modifiedAt: record.modifiedAt });
      }
    }
    return [...entries.values()].sort((a, b) => byPath(a.path, b.path));
  }

  async listPaths(tenantId: string, threadId: string, under: string): Promise<string[]> {
    return this.live(tenantId, threadId)
      .map((r) => r.record.path)
      .filter((p) => isWithin(p, under));
  }

  async splitPaths(tenantId: string, threadId: string, under: string, parts: number): Promise<string[]> {
    return evenCuts(await this.listPaths(tenantId, threadId, under), parts);
  }

  async readText(tenantId: string, threadId: string, path: string) {
    const row = this.rows(tenantId, threadId).get(path);
    return row && !row.deleted ? { file: { ...row.record }, text: row.text } : null;
  }

  async readContent(tenantId: string, threadId: string, path: string) {
    const row = this.rows(tenantId, threadId).get(path);
    if (!row || row.deleted) return null;
    return { file: { ...row.record }, content: row.bytes ?? Buffer.from(row.text ?? '', 'utf8') };
  }

  async readTexts(tenantId: string, threadId: string, paths: string[]) {
    const wanted = new Set(paths);
    return this.live(tenantId, threadId)
      .filter((r) => wanted.has(r.record.path) && r.text !== null)
      .map((r) => ({ path: r.record.path, text: r.text! }));
  }

  async write(tenantId: string, threadId: string, files: FileBody[], policy: WritePolicy) {
    const rows = this.rows(tenantId, threadId);
    if (files.length === 0) return [];
    const liveFiles = new Set(this.live(tenantId, threadId).map((r) => r.record.path));
    const state: WriteState = {
      storageBytes: this.storedBytes(tenantId),
      threadFiles: liveFiles.size,
      existing: new Map(),
      fileAncestors: new Set(),
      directories: new Set(),
    };
    for (const file of files) {
      const old = rows.get(file.path);
      if (old) state.existing.set(file.path, { size: old.record.size, deleted: old.deleted });
      for (const a of ancestorsOf(file.path)) if (liveFiles.has(a)) state.fileAncestors.add(a);
      for (const p of liveFiles) if (p.startsWith(`${file.path}/`)) state.directories.add(file.path);
    }
    const plan = planWrite(files, state, policy);
    if (plan.files.length === 0) return [];
    this.storage.set(tenantId, state.storageBytes + plan.bytes);
    const revision = this.bump(tenantId, threadId);
    return plan.files.map((file) => {
      const old = rows.get(file.path);
      const created = !old || old.deleted;
      this.put(rows, file, revision, old, created);
      return { file: { ...rows.get(file.path)!.record }, created };
    });
  }

  private put(rows: Map<string, Row>, file: FileBody, revision: number, old: Row | undefined, created: boolean) {
    const now = this.now();
    rows.set(file.path, {
      record: {
        path: file.path,
        contentType: file.contentType,
        size: file.size,
        sha256: file.sha256,
        version: old ? old.record.version + 1 : 1,
        revision,
        text: file.text !== null,
        createdAt: created || !old ? now : old.record.createdAt,
        modifiedAt: now,
      },
      text: file.text?.toString('utf8') ?? null,
      bytes: file.bytes,
      deleted: false,
    });
  }

  async editText(
    tenantId: string,
    threadId: string,
    path: string,
    edit: TextEdit,
    policy: Omit<WritePolicy, 'overwrite' | 'maxThreadFiles' | 'pastFileLimit'>,
  ): Promise<ThreadFileRecord | null> {
    const rows = this.rows(tenantId, threadId);
    const row = rows.get(path);
    if (!row || row.deleted) return null;
    const body = edit(row.text, { ...row.record });
    if (!body) return { ...row.record };
    const state: WriteState = {
      storageBytes: this.storedBytes(tenantId),
      // An edit replaces a live file: it never adds one.
      threadFiles: 0,
      existing: new Map([[path, { size: row.record.size, deleted: false }]]),
      fileAncestors: new Set(),
      directories: new Set(),
    };
    const { bytes } = planWrite([body], state, { ...policy, overwrite: true, maxThreadFiles: Number.POSITIVE_INFINITY });
    this.storage.set(tenantId, state.storageBytes + bytes);
    this.put(rows, body, this.bump(tenantId, threadId), row, false);
    return { ...rows.get(path)!.record };
  }

  async remove(tenantId: string, threadId: string, path: string): Promise<string[]> {
    return this.tombstone(tenantId, threadId, (p) => isWithin(p, path)).deleted;
  }

  async removeExact(tenantId: string, threadId: string, paths: string[]) {
    const wanted = new Set(paths);
    return this.tombstone(tenantId, threadId, (p) => wanted.has(p));
  }

  async readContents(tenantId: string, threadId: string, paths: string[]) {
    const wanted = new Set(paths);
    return this.live(tenantId, threadId)
      .filter((r) => wanted.has(r.record.path))
      .map((r) => ({ file: { ...r.record }, content: r.bytes ?? Buffer.from(r.text ?? '', 'utf8') }));
  }

  private tombstone(tenantId: string, threadId: string, matches: (path: string) => boolean) {
    const gone = this.live(tenantId, threadId).filter((r) => matches(r.record.path));
    if (gone.length === 0) return { deleted: [] as string[], revision: null };
    const revision = this.bump(tenantId, threadId);
    const now = this.now();
    let freed = 0;
    for (const row of gone) {
      freed += row.record.size;
      row.deleted = true;
      row.text = null;
      row.bytes = null;
      row.record = { ...row.record, size: 0, version: row.record.version + 1, revision, modifiedAt: now };
    }
    this.storage.set(tenantId, this.storedBytes(tenantId) - freed);
    return { deleted: gone.map((r) => r.record.path), revision };
  }


  // Matching here stands in for PostgreSQL's and follows the one in-process policy (the
  // search module's scanner, under its time budget).
  async findMatchingFiles(tenantId: string, threadId: string, under: string, matcher: LineMatcher, range: PathRange = {}) {
    const scan = lineScanner(matcher, this.regexBudgetMs);
    const inRange = (path: string) =>
      (range.after === undefined || byPath(path, range.after) > 0) && (range.through === undefined || byPath(path, range.through) <= 0);
    return this.live(tenantId, threadId)
      .filter((r) => r.text !== null && isWithin(r.record.path, under) && inRange(r.record.path) && scan(splitLines(r.text), 1).length > 0)
      .map((r) => r.record.path);
  }

  // Every file is split here; `fileTest` (a store's shortcut) changes nothing.
  async matchLines(tenantId: string, threadId: string, paths: string[], matcher: LineMatcher, limit: number, _options?: { fileTest?: boolean }) {
    const scan = lineScanner(matcher, this.regexBudgetMs);
    const out: LineMatch[] = [];
    for (const { path, text } of await this.readTexts(tenantId, threadId, paths)) {
      const lines = splitLines(text);
      for (const i of scan(lines, lines.length)) out.push({ path, line: i + 1, text: lines[i]!.slice(0, MAX_LINE_CHARS + 1) });
    }
    return out.slice(0, limit);
  }

  async countLines(tenantId: string, threadId: string, paths: string[], matcher: LineMatcher, _options?: { fileTest?: boolean }) {
    const scan = lineScanner(matcher, this.regexBudgetMs);
    const out: { path: string; count: number }[] = [];
    for (const { path, text } of await this.readTexts(tenantId, threadId, paths)) {
      const lines = splitLines(text);
      const count = scan(lines, lines.length).length;
      if (count > 0) out.push({ path, count });
    }
    return out;
  }

  async revision(tenantId: string, threadId: string): Promise<number> {
    assertTenant(tenantId);
    return this.revisions.get(`${tenantId}\u0000${threadId}`) ?? 0;
  }

  async changesSince(tenantId: string, threadId: string, revision: number): Promise<ThreadChanges> {
    const current = await this.revision(tenantId, threadId);
    const since = revision > current ? 0 : revision;
    const rows = [...this.rows(tenantId, threadId).values()]
      .filter((r) => r.record.revision > since && (since > 0 || !r.deleted))
      .sort((a, b) => a.record.revision - b.record.revision || byPath(a.record.path, b.record.path));
    return {
      revision: current,
      changed: rows.filter((r) => !r.deleted).map((r) => ({ ...r.record })),
      deleted: rows.filter((r) => r.deleted).map((r) => r.record.path),
    };
  }
}
