import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, QueryFailedError } from 'typeorm';
import { assertTenant, DrydockError } from '@drydock/core';
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
import { RecentTexts } from './recent-texts.js';
import { lineScanner } from './search/text-grep.js';
import { MAX_LINE_CHARS } from './vfs-lines.js';
import { ancestorsOf } from './vfs-path.js';
import { planWrite, type WriteState } from './vfs-write-rules.js';
import { VfsError } from './vfs.errors.js';

// Plain SQL throughout: grep, reads and writes are the filesystem's hot paths. Paths
// are COLLATE "C", so "everything beneath /dir" is the index range
// ['/dir/', '/dir0') ('0' is the byte after '/'), no LIKE escaping needed.
// Writes hold the tenant's tenant_storage row lock (FOR UPDATE) from before they read
// any state until commit: a tenant's writes are serialised, the quota is exact, and a
// file cannot appear under a path that just became a file.

const INVALID_REGULAR_EXPRESSION = '2201B';
const QUERY_CANCELED = '57014';
// Rows per INSERT of a batch (each statement's parameters stay a few MB; 4 + 6 per row,
// far under PostgreSQL's 65,535).
const BATCH_ROWS = 500;
const BATCH_BYTES = 8 * 1024 * 1024;

const FILE_COLUMNS = `path, content_type, size, sha256, version, revision, (bytes IS NULL) AS is_text, created_at, modified_at`;
// Paged reads of large texts (the agent's read tool, GET …/files/read): texts from
// 64 KiB are kept, 16 MiB in all (RecentTexts).
const RECENT_TEXT_MIN_BYTES = 64 * 1024;
const RECENT_TEXTS_MAX_BYTES = 16 * 1024 * 1024;

interface FileRow {
  path: string;
  content_type: string;
  size: string;
  sha256: string;
  version: number;
  revision: string;
  is_text: boolean;
  created_at: Date;
  modified_at: Date;
}

function toRecord(row: FileRow): ThreadFileRecord {
  return {
    path: row.path,
    contentType: row.content_type,
    size: Number(row.size),
    sha256: row.sha256,
    version: row.version,
    revision: Number(row.revision),
    text: row.is_text,
    createdAt: row.created_at,
    modifiedAt: row.modified_at,
  };
}

function assertThread(threadId: string): void {
  if (typeof threadId !== 'string' || threadId.length === 0) {
    throw new DrydockError('THREAD_REQUIRED', 'A thread scope is required for this operation.', 500);
  }
}

// `col` at or beneath `under`, with parameters from $first on.
function beneath(col: string, under: string, first: number): { sql: string; params: string[] } {
  if (under === '/') return { sql: 'TRUE', params: [] };
  return {
    sql: `(${col} = $${first} OR (${col} >= $${first + 1} AND ${col} < $${first + 2}))`,
    params: [under, `${under}/`, `${under}0`],
  };
}

// Strictly beneath a directory: ['/dir/', '/dir0'), or every path for the root.
const below = (dir: string) => (dir === '/' ? ['/', '0'] : [`${dir}/`, `${dir}0`]);

// ARE constructs that can match a newline even in newline-sensitive mode, so a match
// in the whole text does not prove a matching line.
const CROSSES_LINES = /\\[sDWn]|\\u000[aA]|\\c[jJ]/;

// SQL conditions on a whole text (`file`) and on one line (`line`), each with its one
// parameter. Literals use strpos (case-sensitive) or the regex engine in literal mode
// (`***=`, case-insensitive), both several times faster than LIKE/ILIKE on large
// texts, and exact at the file level. For a regex the file condition is
// newline-sensitive and `lineCheck` says whether a line must confirm it (a pattern that
// can match across lines, or one that matches an empty line).
function matchSql(matcher: LineMatcher) {
  if (matcher.kind === 'literal') {
    const condition = matcher.caseInsensitive
      ? (col: string, n: number) => `${col} ~* $${n}`
      : (col: string, n: number) => `strpos(${col}, $${n}) > 0`;
    const param = matcher.caseInsensitive ? `***=${matcher.pattern}` : matcher.pattern;
    return {
      file: condition,
      fileParam: param,
      line: condition,
      lineParam: param,
      lineCheck: false,
      // Whether the pattern matches an empty line (then a text's final newline must
      // not count as starting one more line).
      matchesEmpty: false,
    };
  }
  const op = matcher.caseInsensitive ? '~*' : '~';
  const re = matcher.postgres!;
  // Matched here under the search budget, never unbounded on the event loop.
  const matchesEmpty = lineScanner(matcher)([''], 1).length > 0;
  return {
    file: (col: string, n: number) => `${col} ${op} $${n}`,
    fileParam: `(?n)${re}`,
    line: (col: string, n: number) => `${col} ${op} $${n}`,
    lineParam: re,
    // A pattern that matches an empty line also matches after a text's final newline,
    // where there is no line.
    lineCheck: CROSSES_LINES.test(re) || matchesEmpty,
    matchesEmpty,
  };
}

// Lines of a text column as a set-returning expression, numbered from 1.
const linesOf = (col: string, dropFinalNewline: boolean) =>
  dropFinalNewline
    ? `string_to_table(CASE WHEN right(${col}, 1) = E'\\n' THEN left(${col}, -1) ELSE ${col} END, E'\\n') WITH ORDINALITY`
    : `string_to_table(${col}, E'\\n') WITH ORDINALITY`;

type Run = <R>(sql: string, params?: unknown[]) => Promise<R[]>;

@Injectable()
export class TypeOrmThreadFilesRepository implements ThreadFilesRepository {
  private readonly recentTexts = new RecentTexts(RECENT_TEXT_MIN_BYTES, RECENT_TEXTS_MAX_BYTES);

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async stat(tenantId: string, threadId: string, path: string): Promise<PathRecord | null> {
    assertTenant(tenantId);
    assertThread(threadId);
    const rows: (Partial<FileRow> & { kind: 'file' | 'directory'; modified_at: Date | null })[] = await this.db.query(
      `SELECT 'file' AS kind, ${FILE_COLUMNS}
         FROM thread_files WHERE tenant_id = $1 AND thread_id = $2 AND path = $3 AND NOT deleted
       UNION ALL
       SELECT 'directory', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, max(modified_at)
         FROM thread_files WHERE tenant_id = $1 AND thread_id = $2 AND NOT deleted AND path >= $4 AND path < $5
       HAVING count(*) > 0 OR $3 = '/'`,
      [tenantId, threadId, path, ...below(path)],
    );
    const file = rows.find((r) => r.kind === 'file');
    if (file) return { type: 'file', file: toRecord(file as FileRow) };
    const dir = rows[0];
    return dir ? { type: 'directory', modifiedAt: dir.modified_at } : null;
  }

  async list(tenantId: string, threadId: string, dir: string): Promise<DirectoryEntryRecord[]> {
    assertTenant(tenantId);
    assertThread(threadId);
    const [from, to] = below(dir);
    const rows: { name: string; is_file: boolean; size: string | null; modified_at: Date }[] = await this.db.query(
      `SELECT split_part(substr(path, char_length($3::text) + 1), '/', 1) AS name,
              bool_or(strpos(substr(path, char_length($3::text) + 1), '/') = 0) AS is_file,
              sum(size) AS size, max(modified_at) AS modified_at
         FROM thread_files
        WHERE tenant_id = $1 AND thread_id = $2 AND NOT deleted AND path >= $3 AND path < $4
        GROUP BY 1 ORDER BY 1`,
      [tenantId, threadId, from, to],
    );
    return rows.map((r) => ({
      path: from + r.name,
      type: r.is_file ? 'file' : 'directory',
      size: r.is_file ? Number(r.size) : 0,
      modifiedAt: r.modified_at,
    }));
  }

  async listPaths(tenantId: string, threadId: string, under: string): Promise<string[]> {
    assertTenant(tenantId);
    assertThread(threadId);
    const scope = beneath('path', under, 3);
    const rows: { path: string }[] = await this.db.query(
      `SELECT path FROM thread_files
        WHERE tenant_id = $1 AND thread_id = $2 AND NOT deleted AND ${scope.sql} ORDER BY path`,
      [tenantId, threadId, ...scope.params],
    );
    return rows.map((r) => r.path);
  }

  // percentile_disc over the paths (the column's C collation, as everywhere): the
  // index range is read in the database, not sent.
  async splitPaths(tenantId: string, threadId: string, under: string, parts: number): Promise<string[]> {
    assertTenant(tenantId);
    assertThread(threadId);
    if (parts < 2) return [];
    const fractions = Array.from({ length: parts - 1 }, (_, k) => (k + 1) / parts);
    const scope = beneath('path', under, 4);
    const rows: { cuts: string[] | null }[] = await this.db.query(
      `SELECT percentile_disc($3::float8[]) WITHIN GROUP (ORDER BY path) AS cuts FROM thread_files
        WHERE tenant_id = $1 AND thread_id = $2 AND NOT deleted AND ${scope.sql}`,
      [tenantId, threadId, fractions, ...scope.params],
    );
    return [...new Set(rows[0]?.cuts ?? [])];
  }

  async readText(tenantId: string, threadId: string, path: string) {
    assertTenant(tenantId);
    assertThread(threadId);
    return this.readTextOf(tenantId, threadId, path, true);
  }

  private async readTextOf(tenantId: string, threadId: string, path: string, useKept: boolean): Promise<{ file: ThreadFileRecord; text: string | null } | null> {
    // The text comes back only if it is not the one kept here (same sha256).
    const kept = useKept ? this.recentTexts.sha256Of(tenantId, threadId, path) : null;
    const rows: (FileRow & { text_content: string | null; kept: boolean | null })[] = await this.db.query(
      `SELECT ${FILE_COLUMNS}, sha256 = $4 AS kept, CASE WHEN sha256 = $4 THEN NULL ELSE text_content END AS text_content
         FROM thread_files
        WHERE tenant_id = $1 AND thread_id = $2 AND path = $3 AND NOT deleted`,
      [tenantId, threadId, path, kept],
    );
    const row = rows[0];
    if (!row) return null;
    const file = toRecord(row);
    if (row.kept) {
      const text = this.recentTexts.take(tenantId, threadId, path, file.sha256);
      if (text !== null) return { file, text };
      // Let go in between (a concurrent read kept other texts): read it again.
      return this.readTextOf(tenantId, threadId, path, false);
    }
    if (row.text_content !== null) this.recentTexts.keep(tenantId, threadId, path, file.sha256, row.text_content, file.size);
    return { file, text: row.text_content };
  }

  async readContent(tenantId: string, threadId: string, path: string) {
    assertTenant(tenantId);
    assertThread(threadId);
    const rows: (FileRow & { text_content: string | null; bytes: Buffer | null })[] = await this.db.query(
      `SELECT ${FILE_COLUMNS}, text_content, bytes FROM thread_files
        WHERE tenant_id = $1 AND thread_id = $2 AND path = $3 AND NOT deleted`,
      [tenantId, threadId, path],
    );
    const row = rows[0];
    if (!row) return null;
    return { file: toRecord(row), content: row.bytes ?? Buffer.from(row.text_content ?? '', 'utf8') };
  }

  async write(tenantId: string, threadId: string, files: FileBody[], policy: WritePolicy) {
    assertTenant(tenantId);
    assertThread(threadId);
    if (files.length === 0) return [];
    return this.transaction(async (run) => {
      const storageBytes = await this.lockStorage(run, tenantId);
      const state = await this.writeState(run, tenantId, threadId, files, storageBytes);
      const plan = planWrite(files, state, policy);
      if (plan.files.length === 0) return [];
      const rows = await this.upsert(run, tenantId, threadId, plan.files, plan.bytes, plan.created);
      return rows.map((row) => {
        const old = state.existing.get(row.path);
        return { file: toRecord(row), created: !old || old.deleted };
      });
    });
  }

  async editText(
    tenantId: string,
    threadId: string,
    path: string,
    edit: TextEdit,
    policy: Omit<WritePolicy, 'overwrite' | 'maxThreadFiles' | 'pastFileLimit'>,
  ): Promise<ThreadFileRecord | null> {
    assertTenant(tenantId);
    assertThread(threadId);
    return this.transaction(async (run) => {
      const storageBytes = await this.lockStorage(run, tenantId);
      const [row] = await run<FileRow & { text_content: string | null }>(
        `SELECT ${FILE_COLUMNS}, text_content FROM thread_files
          WHERE tenant_id = $1 AND thread_id = $2 AND path = $3 AND NOT deleted`,
        [tenantId, threadId, path],
      );
      if (!row) return null;
      const current = toRecord(row);
      const body = edit(row.text_content, current);
      if (!body) return current;
      // A live file has no live file above or beneath it, so only size rules apply.
      const state: WriteState = {
        storageBytes,
        // An edit replaces a live file: it never adds one.
        threadFiles: 0,
        existing: new Map([[path, { size: current.size, deleted: false }]]),
        fileAncestors: new Set(),
        directories: new Set(),
      };
      const { bytes } = planWrite([body], state, { ...policy, overwrite: true, maxThreadFiles: Number.POSITIVE_INFINITY });
      const [updated] = await this.upsert(run, tenantId, threadId, [body], bytes, 0);
      return toRecord(updated);
    });
  }

  // Single-table range statements only (no self-join): a thread the planner's
  // statistics have not seen yet is estimated at one row, and a join then turns into a
  // nested loop over the whole thread for every deleted file. The tenant's storage row
  // lock keeps the thread still between the statements.
  async remove(tenantId: string, threadId: string, path: string): Promise<string[]> {
    assertTenant(tenantId);
    assertThread(threadId);
    const scope = beneath('path', path, 3);
    const { deleted } = await this.tombstone(tenantId, threadId, scope.sql, scope.params);
    return deleted;
  }

  async removeExact(tenantId: string, threadId: string, paths: string[]) {
    assertTenant(tenantId);
    assertThread(threadId);
    if (paths.length === 0) return { deleted: [], revision: null };
    return this.tombstone(tenantId, threadId, 'path = ANY($3::text[])', [paths]);
  }

  async readContents(tenantId: string, threadId: string, paths: string[]) {
    assertTenant(tenantId);
    assertThread(threadId);
    if (paths.length === 0) return [];
    const rows: (FileRow & { text_content: string | null; bytes: Buffer | null })[] = await this.db.query(
      `SELECT ${FILE_COLUMNS}, text_content, bytes FROM thread_files
        WHERE tenant_id = $1 AND thread_id = $2 AND path = ANY($3::text[]) AND NOT deleted
        ORDER BY path`,
      [tenantId, threadId, paths],
    );
    return rows.map((row) => ({
      file: toRecord(row),
      content: row.bytes ?? Buffer.from(row.text_content ?? '', 'utf8'),
    }));
  }

  async findMatchingFiles(tenantId: string, threadId: string, under: string, matcher: LineMatcher, range: PathRange = {}): Promise<string[]> {
    assertTenant(tenantId);
    assertThread(threadId);
    const match = matchSql(matcher);
    const params: unknown[] = [tenantId, threadId, match.fileParam];
    let confirm = '';
    if (match.lineCheck) {
      params.push(match.lineParam);
      confirm = `AND EXISTS (SELECT 1 FROM ${linesOf('f.text_content', match.matchesEmpty)} AS l(t, n)
                              WHERE ${match.line('l.t', params.length)})`;
    }
    let bounds = '';
    if (range.after !== undefined) bounds += ` AND f.path > $${params.push(range.after)}`;
    if (range.through !== undefined) bounds += ` AND f.path <= $${params.push(range.through)}`;
    const scope = beneath('f.path', under, params.length + 1);
    const rows: { path: string }[] = await this.search(
      `SELECT f.path FROM thread_files f
        WHERE f.tenant_id = $1 AND f.thread_id = $2 AND NOT f.deleted AND ${scope.sql}${bounds}
          AND ${match.file('f.text_content', 3)} ${confirm}
        ORDER BY f.path`,
      [...params, ...scope.params],
      matcher,
    );
    return rows.map((r) => r.path);
  }

  async matchLines(
    tenantId: string,
    threadId: string,
    paths: string[],
    matcher: LineMatcher,
    limit: number,
    { fileTest = true }: { fileTest?: boolean } = {},
  ): Promise<LineMatch[]> {
    assertTenant(tenantId);
    assertThread(threadId);
    if (paths.length === 0 || limit <= 0) return [];
    const match = matchSql(matcher);
    // With the whole-text test first, a file without a match is never split into lines
    // (a matching line implies a match in the text, also in newline-sensitive mode); a
    // file with one is read twice. The driver's rows are the answer as they are (line
    // as int4 arrives as a number): a grep of 45,000 lines allocates no second object
    // per line.
    const params = [tenantId, threadId, paths, match.lineParam];
    if (fileTest) params.push(match.fileParam);
    return this.search<LineMatch>(
      `SELECT f.path, l.n::int4 AS line, left(l.t, ${MAX_LINE_CHARS + 1}) AS text
         FROM thread_files f CROSS JOIN LATERAL ${linesOf('f.text_content', match.matchesEmpty)} AS l(t, n)
        WHERE f.tenant_id = $1 AND f.thread_id = $2 AND f.path = ANY($3::text[]) AND NOT f.deleted
          AND f.text_content IS NOT NULL ${fileTest ? `AND ${match.file('f.text_content', 5)}` : ''} AND ${match.line('l.t', 4)}
        ORDER BY f.path, l.n
        LIMIT ${Math.floor(limit)}`,
      params,
      matcher,
    );
  }

  async countLines(tenantId: string, threadId: string, paths: string[], matcher: LineMatcher, { fileTest = true }: { fileTest?: boolean } = {}) {
    assertTenant(tenantId);
    assertThread(threadId);
    if (paths.length === 0) return [];
    const match = matchSql(matcher);
    // The whole-text test as in matchLines.
    const params = [tenantId, threadId, paths, match.lineParam];
    if (fileTest) params.push(match.fileParam);
    const rows: { path: string; count: string }[] = await this.search(
      `SELECT f.path, count(*) AS count
         FROM thread_files f CROSS JOIN LATERAL ${linesOf('f.text_content', match.matchesEmpty)} AS l(t, n)
        WHERE f.tenant_id = $1 AND f.thread_id = $2 AND f.path = ANY($3::text[]) AND NOT f.deleted
          AND f.text_content IS NOT NULL ${fileTest ? `AND ${match.file('f.text_content', 5)}` : ''} AND ${match.line('l.t', 4)}
        GROUP BY f.path ORDER BY f.path`,
      params,
      matcher,
    );
    return rows.map((r) => ({ path: r.path, count: Number(r.count) }));
  }

  async revision(tenantId: string, threadId: string): Promise<number> {
    assertTenant(tenantId);
    assertThread(threadId);
    const rows: { revision: string }[] = await this.db.query(
      `SELECT revision FROM thread_revisions WHERE tenant_id = $1 AND thread_id = $2`,
      [tenantId, threadId],
    );
    return rows[0] ? Number(rows[0].revision) : 0;
  }

  // One statement, so the revision and the rows come from one snapshot. A revision the
  // thread has not reached (a restored database) is answered like 0: a full listing.
  async changesSince(tenantId: string, threadId: string, revision: number): Promise<ThreadChanges> {
    assertTenant(tenantId);
    assertThread(threadId);
    const rows: (Omit<FileRow, 'path'> & { path: string | null; current: string | null; deleted: boolean })[] =
      await this.db.query(
        `WITH cur AS (
           SELECT coalesce((SELECT revision FROM thread_revisions WHERE tenant_id = $1 AND thread_id = $2), 0) AS current
         ), since AS (
           SELECT CASE WHEN $3::bigint > current THEN 0 ELSE $3::bigint END AS rev FROM cur
         )
         SELECT cur.current, f.path, f.content_type, f.size, f.sha256, f.version, f.revision,
                (f.bytes IS NULL) AS is_text, f.created_at, f.modified_at, f.deleted
           FROM cur CROSS JOIN since
           LEFT JOIN thread_files f
             ON f.tenant_id = $1 AND f.thread_id = $2 AND f.revision > since.rev
            AND (since.rev > 0 OR NOT f.deleted)
          ORDER BY f.revision, f.path`,
        [tenantId, threadId, revision],
      );
    const changes: ThreadChanges = { revision: Number(rows[0]?.current ?? 0), changed: [], deleted: [] };
    for (const row of rows) {
      if (row.path === null) continue;
      if (row.deleted) changes.deleted.push(row.path);
      else changes.changed.push(toRecord(row as FileRow));
    }
    return changes;
  }

  // Tombstones the live files matching `where` (parameters from $3 on) in one
  // transaction and one revision; nothing matching changes nothing.
  private tombstone(
    tenantId: string,
    threadId: string,
    where: string,
    params: unknown[],
  ): Promise<{ deleted: string[]; revision: number | null }> {
    return this.transaction(async (run) => {
      await this.lockStorage(run, tenantId);
      const [found] = await run<{ files: number; bytes: string }>(
        `SELECT count(*)::int AS files, coalesce(sum(size), 0)::bigint AS bytes FROM thread_files
          WHERE tenant_id = $1 AND thread_id = $2 AND NOT deleted AND ${where}`,
        [tenantId, threadId, ...params],
      );
      if (!found || found.files === 0) return { deleted: [], revision: null };
      const [rev] = await run<{ revision: string }>(
        `INSERT INTO thread_revisions AS r (tenant_id, thread_id, revision) VALUES ($1, $2, 1)
         ON CONFLICT (tenant_id, thread_id) DO UPDATE SET revision = r.revision + 1, files = greatest(r.files - $3, 0)
         RETURNING revision`,
        [tenantId, threadId, found.files],
      );
      const rows = await run<{ path: string }>(
        `UPDATE thread_files
            SET deleted = true, text_content = NULL, bytes = NULL, size = 0,
                version = version + 1, revision = $${3 + params.length}, modified_at = now()
          WHERE tenant_id = $1 AND thread_id = $2 AND NOT deleted AND ${where}
          RETURNING path`,
        [tenantId, threadId, ...params, rev!.revision],
      );
      await run(`UPDATE tenant_storage SET bytes = bytes - $2 WHERE tenant_id = $1`, [tenantId, found.bytes]);
      return { deleted: rows.map((r) => r.path).sort(), revision: Number(rev!.revision) };
    });
  }

  // --- write internals -----------------------------------------------------------

  // TypeORM's transaction (rolled back on any error, the connection released); `run`
  // gives a statement's rows, whatever the statement.
  private transaction<T>(work: (run: Run) => Promise<T>): Promise<T> {
    return this.db.transaction((manager) => {
      const qr = manager.queryRunner!;
      const run: Run = async <R>(sql: string, params: unknown[] = []) =>
        ((await qr.query(sql, params, true)).records ?? []) as R[];
      return work(run);
    });
  }

  // Takes the tenant's write lock and returns its stored bytes.
  private async lockStorage(run: Run, tenantId: string): Promise<number> {
    const lock = () => run<{ bytes: string }>(`SELECT bytes FROM tenant_storage WHERE tenant_id = $1 FOR UPDATE`, [tenantId]);
    let rows = await lock();
    if (rows.length === 0) {
      await run(`INSERT INTO tenant_storage (tenant_id, bytes) VALUES ($1, 0) ON CONFLICT DO NOTHING`, [tenantId]);
      rows = await lock();
    }
    return Number(rows[0].bytes);
  }

  private async writeState(
    run: Run,
    tenantId: string,
    threadId: string,
    files: FileBody[],
    storageBytes: number,
  ): Promise<WriteState> {
    const paths = files.map((f) => f.path);
    const ancestors = [...new Set(paths.flatMap(ancestorsOf))];
    // One primary-key probe per path (LATERAL, ORDER BY path, LIMIT 1), whatever the
    // planner believes about the thread's size: with sorts off for this statement, only
    // the primary key gives that order (an exact path is written as a range: with `=`,
    // the order would be moot). Left to itself, the planner probed a thread the
    // statistics did not know yet (estimated at one row) through the revision index,
    // filtering every row of the thread for each path, then sorting the one it found:
    // writing 10,000 files in batches of 1,000 got slower with every batch (0.4 s for
    // the first, 2.9 s for the tenth) until autovacuum analyzed the table.
    await run(`SELECT set_config('enable_sort', 'off', true)`);
    const rows = await run<{ kind: 'self' | 'ancestor' | 'directory'; path: string; size: string; deleted: boolean }>(
      `SELECT 'self' AS kind, f.path, f.size, f.deleted FROM unnest($3::text[]) AS p,
        LATERAL (SELECT f.path, f.size, f.deleted FROM thread_files f
                  WHERE f.tenant_id = $1 AND f.thread_id = $2 AND f.path >= p AND f.path <= p
                  ORDER BY f.path LIMIT 1) AS f
       UNION ALL
       SELECT 'ancestor', f.path, 0, false FROM unnest($4::text[]) AS p,
        LATERAL (SELECT f.path FROM thread_files f
                  WHERE f.tenant_id = $1 AND f.thread_id = $2 AND f.path >= p AND f.path <= p AND NOT f.deleted
                  ORDER BY f.path LIMIT 1) AS f
       UNION ALL
       SELECT 'directory', p, 0, false FROM unnest($3::text[]) AS p,
        LATERAL (SELECT 1 FROM thread_files f
                  WHERE f.tenant_id = $1 AND f.thread_id = $2 AND NOT f.deleted
                    AND f.path >= (p || '/') AND f.path < (p || '0')
                  ORDER BY f.path LIMIT 1) AS below`,
      [tenantId, threadId, paths, ancestors],
    );
    await run(`SELECT set_config('enable_sort', 'on', true)`);
    // Kept beside the revision (moved by every write and delete, under the tenant's lock),
    // so a write to a large thread does not count its files.
    const [count] = await run<{ files: number }>(
      `SELECT files FROM thread_revisions WHERE tenant_id = $1 AND thread_id = $2`,
      [tenantId, threadId],
    );
    const state: WriteState = {
      storageBytes,
      threadFiles: count?.files ?? 0,
      existing: new Map(),
      fileAncestors: new Set(),
      directories: new Set(),
    };
    for (const row of rows) {
      if (row.kind === 'self') state.existing.set(row.path, { size: Number(row.size), deleted: row.deleted });
      else if (row.kind === 'ancestor') state.fileAncestors.add(row.path);
      else state.directories.add(row.path);
    }
    return state;
  }

  // Stores the bodies in chunks; the first statement also moves the thread revision, its
  // file count (by `created`) and the tenant's byte total, and later chunks stamp the
  // same revision.
  private async upsert(run: Run, tenantId: string, threadId: string, files: FileBody[], delta: number, created: number) {
    const out: FileRow[] = [];
    let revision: string | null = null;
    for (const chunk of chunks(files)) {
      const rev: string =
        revision === null
          ? `rev AS (
               INSERT INTO thread_revisions AS r (tenant_id, thread_id, revision, files) VALUES ($1, $2, 1, $4::int)
               ON CONFLICT (tenant_id, thread_id) DO UPDATE SET revision = r.revision + 1, files = r.files + $4::int
               RETURNING revision
             ), storage AS (
               UPDATE tenant_storage SET bytes = bytes + $3::bigint WHERE tenant_id = $1 AND $3::bigint <> 0
             )`
          : `rev AS (SELECT $3::bigint AS revision, $4::int AS files)`;
      // Six parameters per file, not an array per column: an array parameter travels as
      // one literal that the driver builds by escaping every text (and every bytea, as
      // hex) and PostgreSQL parses back, 10 MB of it per 1,000-file archive; a text
      // parameter goes as it is, a bytea as binary, and a text held as its UTF-8 bytes
      // (FileBody) as binary too: text's binary form is those bytes, which PostgreSQL
      // checks are valid UTF-8 as it would the string.
      const values = chunk
        .map((_, i) => {
          const n = 5 + i * 6;
          return `($${n}::text, $${n + 1}::text, $${n + 2}::bytea, $${n + 3}::text, $${n + 4}::bigint, $${n + 5}::text)`;
        })
        .join(', ');
      const params: unknown[] = [tenantId, threadId, revision ?? delta, revision === null ? created : 0];
      for (const f of chunk) params.push(f.path, f.text, f.bytes, f.contentType, f.size, f.sha256);
      const rows: FileRow[] = await run<FileRow>(
        `WITH ${rev}
         INSERT INTO thread_files AS f
                (tenant_id, thread_id, path, text_content, bytes, content_type, size, sha256,
                 version, revision, deleted, created_at, modified_at)
         SELECT $1, $2, s.path, s.text_content, s.bytes, s.content_type, s.size, s.sha256,
                1, rev.revision, false, now(), now()
           FROM (VALUES ${values}) AS s(path, text_content, bytes, content_type, size, sha256) CROSS JOIN rev
         ON CONFLICT (tenant_id, thread_id, path) DO UPDATE SET
                text_content = EXCLUDED.text_content, bytes = EXCLUDED.bytes,
                content_type = EXCLUDED.content_type, size = EXCLUDED.size, sha256 = EXCLUDED.sha256,
                version = f.version + 1, revision = EXCLUDED.revision, deleted = false,
                created_at = CASE WHEN f.deleted THEN EXCLUDED.created_at ELSE f.created_at END,
                modified_at = EXCLUDED.modified_at
         RETURNING ${FILE_COLUMNS}`,
        params,
      );
      revision ??= rows[0].revision;
      out.push(...rows);
    }
    return out;
  }

  // PostgreSQL's regex engine may still refuse a pattern JS accepted (e.g. "too
  // complex"); that surfaces as INVALID_PATTERN, which the service answers in JS.
  private async search<R>(sql: string, params: unknown[], matcher: LineMatcher): Promise<R[]> {
    try {
      return await this.db.query(sql, params);
    } catch (error) {
      const code = error instanceof QueryFailedError ? (error.driverError as { code?: string }).code : undefined;
      if (code === INVALID_REGULAR_EXPRESSION && matcher.kind === 'regex') {
        throw VfsError.invalidPattern(matcher.source, (error as Error).message);
      }
      // The connection's statement timeout cut the search off: the tenant's pattern,
      // not the platform, is at fault.
      if (code === QUERY_CANCELED) {
        const pattern = matcher.kind === 'regex' ? matcher.source : matcher.pattern;
        throw VfsError.searchTimeout(pattern, statementTimeoutMs(this.db));
      }
      throw error;
    }
  }
}

// The statement timeout this connection was opened with, for the error's sentence.
function statementTimeoutMs(db: DataSource): number {
  const extra = (db.options as { extra?: { statement_timeout?: number } }).extra;
  return Number(extra?.statement_timeout ?? 0);
}

function* chunks(files: FileBody[]): Generator<FileBody[]> {
  let chunk: FileBody[] = [];
  let bytes = 0;
  for (const file of files) {
    if (chunk.length > 0 && (chunk.length >= BATCH_ROWS || bytes + file.size > BATCH_BYTES)) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(file);
    bytes += file.size;
  }
  if (chunk.length > 0) yield chunk;
}
