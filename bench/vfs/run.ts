// Thread-filesystem benchmark: the @drydock/vfs operations an agent leans on (bulk
// write, ls, glob, literal grep, paged read) on one thread holding 10,000 files of
// about 100 MB, through VfsService taken from an in-process gateway (PostgreSQL storage).
//
// A benchmark, not a test: it prints figures and only fails when an answer is wrong.
// See bench/README.md for how to run it and how to read the output.
//
//   npm run build && npm run bench:vfs -- [options]
import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig, TenantsService } from '@drydock/core';
import { type GrepMode, type GrepResult, type ThreadScope, VfsService } from '@drydock/vfs';
import { runMigrations } from '../../migrations/index.js';

const MiB = 1024 * 1024;
const TARGET_GREP_MS = 500;
const TARGET_READ_MS = 10;
const TARGET_BULK_S = 5;
const LS_DIR = '/repo/src/components';
const BIG_FILE = '/repo/docs/handbook.md';
const BIG_FILE_BYTES = 1 * MiB;
const READ_LIMIT = 500;
const GREP_DEFAULT_MAX = 1000; // the service's default maxMatches (DEFAULT_MAX_MATCHES)
const GREP_FULL_MAX = 100_000; // the service's ceiling
// Literals for grep: RARE is put in a handful of files, COMMON into ~1 line in 40.
const RARE = 'XYZZY_NEEDLE_7F3A';
const RARE_FILES = 5;
const COMMON = 'retryBudget';

const USAGE = `Usage: node dist/bench/vfs/run.js [options]

  --files <n>     files in the thread, the 1 MiB file included   (BENCH_VFS_FILES, default 10000)
  --mb <n>        their total size in MiB                         (BENCH_VFS_MB, default 100)
  --runs <n>      timed runs of each read operation (p50 of them) (BENCH_VFS_RUNS, default 10)
  --batch <n>     files per writeMany call                        (BENCH_VFS_BATCH, default 1000)
  --single <n>    files written with single write() calls         (BENCH_VFS_SINGLE, default 500; 0 skips)
  --seed <n>      seed of the generated content                   (BENCH_VFS_SEED, default 1)
  --analyze       ANALYZE thread_files after the bulk write (before the reads and the delete)
  --no-rest       skip the REST read (GET /v1/threads/:id/files/read)
  -h, --help

Reads DATABASE_URL, REDIS_URL, DRYDOCK_ADMIN_KEY, VFS_MAX_FILE_BYTES (defaults: the local
dev services, see bench/README.md).`;

// ---------------------------------------------------------------------------------------
// Options

interface Options {
  files: number;
  mb: number;
  runs: number;
  batch: number;
  single: number;
  seed: number;
  rest: boolean;
  analyze: boolean;
}

class BenchError extends Error {}

function readOptions(): Options {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      options: {
        files: { type: 'string' },
        mb: { type: 'string' },
        runs: { type: 'string' },
        batch: { type: 'string' },
        single: { type: 'string' },
        seed: { type: 'string' },
        analyze: { type: 'boolean' },
        'no-rest': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new BenchError(`${(error as Error).message}\n\n${USAGE}`);
  }
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const env = process.env;
  const num = (name: string, raw: string | boolean | undefined, def: number, min: number, integer = true): number => {
    if (raw === undefined || raw === '') return def;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min || (integer && !Number.isInteger(value))) {
      throw new BenchError(`${name} must be ${integer ? 'an integer' : 'a number'} >= ${min} (got "${raw}")`);
    }
    return value;
  };
  return {
    files: num('--files', values.files ?? env.BENCH_VFS_FILES, 10_000, 3),
    mb: num('--mb', values.mb ?? env.BENCH_VFS_MB, 100, 2, false),
    runs: num('--runs', values.runs ?? env.BENCH_VFS_RUNS, 10, 1),
    batch: num('--batch', values.batch ?? env.BENCH_VFS_BATCH, 1000, 1),
    single: num('--single', values.single ?? env.BENCH_VFS_SINGLE, 500, 0),
    seed: num('--seed', values.seed ?? env.BENCH_VFS_SEED, 1, 0),
    rest: !values['no-rest'],
    analyze: Boolean(values.analyze),
  };
}

// ---------------------------------------------------------------------------------------
// Deterministic content: mulberry32, a vocabulary, and line templates per extension.

function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// No word here may combine into RARE or COMMON.
const WORDS = (
  'account active adapter agent alpha amount archive array async batch binary block buffer ' +
  'cache callback channel checksum client cluster column commit config context counter cursor ' +
  'data delta digest document domain draft element engine entry event export factor field filter ' +
  'format frame graph handler header index input item job journal kernel label layer limit list ' +
  'loader manifest matrix message metric model module node offset option order output owner packet ' +
  'page parser path payload policy pool prefix process queue range reader record region report ' +
  'request resource result route sample scheduler schema scope segment sensor session shard signal ' +
  'snapshot source stage state status stream summary table target task tenant thread token trace ' +
  'update user value vector version window worker writer'
).split(' ');
const TYPES = ['string', 'number', 'boolean', 'Date', 'Buffer', 'Record<string, number>', 'string[]', 'Promise<void>'];
const EXTENSIONS = ['ts', 'ts', 'ts', 'ts', 'py', 'py', 'py', 'md', 'md', 'json'];

class TextGen {
  constructor(readonly rnd: () => number) {}

  int(n: number): number {
    return Math.floor(this.rnd() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  word(): string {
    // The common literal rides in as an identifier or word (~1 line in 40 overall).
    return this.rnd() < 0.006 ? COMMON : this.pick(WORDS);
  }
  cap(w: string): string {
    return w[0]!.toUpperCase() + w.slice(1);
  }
  camel(): string {
    return this.word() + this.cap(this.pick(WORDS));
  }
  pascal(): string {
    return this.cap(this.pick(WORDS)) + this.cap(this.pick(WORDS));
  }
  snake(): string {
    return `${this.pick(WORDS)}_${this.word()}`;
  }
  sentence(min = 6, max = 14): string {
    const n = min + this.int(max - min + 1);
    const words: string[] = [];
    for (let i = 0; i < n; i++) words.push(this.word());
    return `${this.cap(words.join(' '))}.`;
  }

  line(ext: string): string {
    const r = this.int(10);
    switch (ext) {
      case 'ts':
        switch (r) {
          case 0: return `import { ${this.pascal()}, ${this.camel()} } from './${this.pick(WORDS)}-${this.pick(WORDS)}.js';`;
          case 1: return `export async function ${this.camel()}(${this.word()}: ${this.pick(TYPES)}, ${this.word()}: ${this.pick(TYPES)}): Promise<${this.pick(TYPES)}> {`;
          case 2: return `  const ${this.camel()} = await this.${this.word()}.${this.camel()}(${this.word()}, ${this.int(1000)});`;
          case 3: return `  if (${this.word()}.${this.camel()} > ${this.int(100)}) return ${this.camel()};`;
          case 4: return `  // ${this.sentence()}`;
          case 5: return `  ${this.word()}.${this.camel()}.push({ ${this.word()}: ${this.camel()}, ${this.word()}: '${this.pick(WORDS)}' });`;
          case 6: return `  for (const ${this.word()} of ${this.camel()}) ${this.word()} += ${this.word()}.${this.word()};`;
          case 7: return `  throw new ${this.pascal()}Error(\`${this.sentence(3, 6)} \${${this.word()}}\`);`;
          case 8: return `}`;
          default: return `  return { ${this.word()}, ${this.camel()}: ${this.word()}.${this.word()} ?? null };`;
        }
      case 'py':
        switch (r) {
          case 0: return `from ${this.pick(WORDS)}.${this.pick(WORDS)} import ${this.pascal()}, ${this.snake()}`;
          case 1: return `def ${this.snake()}(${this.word()}, ${this.snake()}=None, *, ${this.word()}=${this.int(100)}):`;
          case 2: return `    ${this.snake()} = ${this.word()}.${this.snake()}(${this.word()}, ${this.int(1000)})`;
          case 3: return `    if ${this.word()} is not None and ${this.snake()} > ${this.int(100)}:`;
          case 4: return `    # ${this.sentence()}`;
          case 5: return `class ${this.pascal()}(${this.pascal()}):`;
          case 6: return `        ${this.word()}.append({"${this.word()}": ${this.snake()}, "${this.word()}": "${this.pick(WORDS)}"})`;
          case 7: return `    for ${this.word()} in self.${this.snake()}:`;
          case 8: return ``;
          default: return `    return ${this.snake()}(${this.word()}, ${this.word()}=${this.word()})`;
        }
      case 'md':
        switch (r) {
          case 0: return `## ${this.cap(this.word())} ${this.word()} ${this.word()}`;
          case 1: return `- ${this.sentence(4, 9)}`;
          case 2: return ``;
          case 3: return `Use \`${this.camel()}()\` when the ${this.word()} ${this.word()} is ${this.word()}; ${this.sentence(4, 8)}`;
          default: return `${this.sentence()} ${this.sentence(4, 10)}`;
        }
      default: // json entry (the caller adds the comma)
        switch (r % 4) {
          case 0: return `  "${this.camel()}": "${this.pick(WORDS)}-${this.int(100000)}"`;
          case 1: return `  "${this.camel()}": ${this.int(1_000_000) / 100}`;
          case 2: return `  "${this.camel()}": [${this.int(100)}, ${this.int(100)}, ${this.int(100)}]`;
          default: return `  "${this.camel()}": { "${this.word()}": "${this.word()}", "${this.word()}": ${this.rnd() < 0.5} }`;
        }
    }
  }

  rareLine(ext: string): string {
    if (ext === 'py') return `    # ${RARE}: keep in sync with the ${this.word()} ${this.word()}`;
    if (ext === 'md') return `> ${RARE}: keep in sync with the ${this.word()} ${this.word()}.`;
    if (ext === 'json') return `  "note": "${RARE}"`;
    return `  // ${RARE}: keep in sync with the ${this.word()} ${this.word()}`;
  }
}

interface GenFile {
  path: string;
  content: string;
  // 1-based numbers of the lines holding each literal.
  rareLines: number[];
  commonLines: number[];
}

// Lines until `size` characters (ASCII, so bytes); `rareAt` puts the rare literal
// near that fraction of the file.
function makeFile(gen: TextGen, path: string, ext: string, size: number, rareAt: number | null): GenFile {
  const lines: string[] = ext === 'json' ? ['{'] : [];
  let length = ext === 'json' ? 2 : 0;
  const end = ext === 'json' ? 2 : 0; // '}\n'
  let rarePending = rareAt !== null;
  while (length + end < size) {
    let line = rarePending && length >= rareAt! * size ? gen.rareLine(ext) : gen.line(ext);
    if (rarePending && line.includes(RARE)) rarePending = false;
    if (ext === 'json') line += ',';
    lines.push(line);
    length += line.length + 1;
  }
  if (rarePending) {
    const line = gen.rareLine(ext) + (ext === 'json' ? ',' : '');
    lines.push(line);
  }
  if (ext === 'json') {
    lines[lines.length - 1] = lines[lines.length - 1]!.replace(/,$/, '');
    if (lines.length === 1) lines.push('  "empty": true');
    lines.push('}');
  }
  const rareLines: number[] = [];
  const commonLines: number[] = [];
  lines.forEach((line, i) => {
    if (line.includes(RARE)) rareLines.push(i + 1);
    if (line.includes(COMMON)) commonLines.push(i + 1);
  });
  return { path, content: `${lines.join('\n')}\n`, rareLines, commonLines };
}

interface Dataset {
  files: GenFile[];
  bytes: number;
  lsCount: number;
  tsPaths: string[];
  big: GenFile;
}

// files - 1 files of ~equal size (±50%) plus the 1 MiB file: LS_DIR holds min(1000,
// files/2) of them, the rest sit three levels deep under /repo/packages.
function generate(count: number, totalBytes: number, seed: number): Dataset {
  const gen = new TextGen(prng(seed));
  const small = count - 1;
  const lsCount = Math.min(1000, Math.floor(count / 2));
  const mean = Math.max(200, Math.floor((totalBytes - BIG_FILE_BYTES) / small));
  const rare = new Set<number>();
  while (rare.size < Math.min(RARE_FILES, small)) rare.add(gen.int(small));
  const files: GenFile[] = [];
  for (let i = 0; i < small; i++) {
    const ext = EXTENSIONS[i % EXTENSIONS.length]!;
    const name = `${gen.pick(WORDS)}-${String(i).padStart(5, '0')}.${ext}`;
    let path: string;
    if (i < lsCount) path = `${LS_DIR}/${name}`;
    else {
      const j = i - lsCount;
      path = `/repo/packages/pkg-${String(j % 30).padStart(2, '0')}/src/${WORDS[Math.floor(j / 30) % 8]}/${name}`;
    }
    const size = Math.round(mean * (0.5 + gen.rnd()));
    files.push(makeFile(gen, path, ext, size, rare.has(i) ? gen.rnd() : null));
  }
  const big = makeFile(gen, BIG_FILE, 'md', BIG_FILE_BYTES, null);
  files.push(big);
  return {
    files,
    bytes: files.reduce((s, f) => s + f.content.length, 0),
    lsCount,
    tsPaths: files.filter((f) => f.path.endsWith('.ts')).map((f) => f.path).sort(),
    big,
  };
}

// ---------------------------------------------------------------------------------------
// Statistics and output

// Nearest-rank percentile of an ascending array.
function percentile(sorted: number[], p: number): number {
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

function stats(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { n: sorted.length, min: sorted[0]!, p50: percentile(sorted, 50), max: sorted[sorted.length - 1]! };
}

const fmtMs = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const fmtInt = (x: number) => x.toLocaleString('en-US');
const mib = (bytes: number) => (bytes / MiB).toFixed(1);

function table(headers: string[], rows: string[][], leftColumns = 1): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i < leftColumns ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const verdict = (value: number, limit: number) => (value < limit ? 'met' : 'NOT met');

async function time<T>(fn: () => Promise<T>): Promise<{ ms: number; result: T }> {
  const t0 = performance.now();
  const result = await fn();
  return { ms: performance.now() - t0, result };
}

// One untimed warm-up, then `runs` timed runs; `check` validates every answer.
async function repeat<T>(runs: number, fn: () => Promise<T>, check: (result: T) => void) {
  check(await fn());
  const samples: number[] = [];
  let last!: T;
  for (let i = 0; i < runs; i++) {
    const { ms, result } = await time(fn);
    check(result);
    samples.push(ms);
    last = result;
  }
  return { ...stats(samples), last };
}

function expect(condition: unknown, message: string): asserts condition {
  if (!condition) throw new BenchError(`wrong answer: ${message}`);
}

// ---------------------------------------------------------------------------------------
// Expected grep answers

interface GrepCase {
  label: string;
  pattern: string;
  mode: GrepMode;
  maxMatches?: number;
}

function grepChecker(data: Dataset, c: GrepCase): (r: GrepResult) => string {
  const which = c.pattern === RARE ? 'rareLines' : 'commonLines';
  const matching = data.files.filter((f) => f[which].length > 0).sort((a, b) => (a.path < b.path ? -1 : 1));
  const max = c.maxMatches ?? GREP_DEFAULT_MAX;
  return (r) => {
    expect(r.mode === c.mode, `${c.label}: mode ${r.mode}`);
    if (c.mode === 'files_with_matches') {
      const want = matching.slice(0, max).map((f) => f.path);
      expect(r.files?.length === want.length && r.files.every((p, i) => p === want[i]), `${c.label}: files differ`);
      expect(r.truncated === matching.length > max, `${c.label}: truncated ${r.truncated}`);
      return `${fmtInt(want.length)} of ${fmtInt(matching.length)} files`;
    }
    if (c.mode === 'count') {
      const want = matching.slice(0, max);
      expect(
        r.counts?.length === want.length && r.counts.every((x, i) => x.path === want[i]!.path && x.count === want[i]![which].length),
        `${c.label}: counts differ`,
      );
      const lines = r.counts.reduce((s, x) => s + x.count, 0);
      return `${fmtInt(lines)} lines in ${fmtInt(want.length)} files`;
    }
    const all = matching.flatMap((f) => f[which].map((line) => ({ path: f.path, line })));
    const want = all.slice(0, max);
    expect(
      r.matches?.length === want.length &&
        r.matches.every((m, i) => m.path === want[i]!.path && m.line === want[i]!.line && m.text.includes(c.pattern)),
      `${c.label}: matching lines differ (${r.matches?.length} vs ${want.length})`,
    );
    expect(r.truncated === all.length > max, `${c.label}: truncated ${r.truncated}`);
    return `${fmtInt(want.length)} of ${fmtInt(all.length)} lines`;
  };
}

// The expected `cat -n` page of the big file.
function expectedPage(content: string, offset: number, limit: number): string {
  const lines = content.split('\n');
  lines.pop();
  return lines
    .slice(offset, offset + limit)
    .map((l, i) => `${String(offset + i + 1).padStart(6)}\t${l}`)
    .join('\n');
}

// When PostgreSQL last gathered statistics on thread_files: plans of the VFS queries
// follow them (a thread the statistics do not know of yet is estimated at ~1 row).
async function plannerStats(db: DataSource): Promise<string> {
  const [row] = (await db.query(
    `SELECT extract(epoch FROM now() - greatest(last_analyze, last_autoanalyze)) AS age, n_mod_since_analyze AS changed
       FROM pg_stat_user_tables WHERE relname = 'thread_files'`,
  )) as { age: string | null; changed: string }[];
  if (!row) return 'unknown';
  const age = row.age === null ? 'never analyzed' : `last analyzed ${Number(row.age).toFixed(0)} s ago`;
  return `${age}, ${fmtInt(Number(row.changed))} rows changed since (as of the last stats flush)`;
}

// ---------------------------------------------------------------------------------------
// Main

async function main(): Promise<void> {
  const options = readOptions();
  const env = process.env;
  env.DATABASE_URL ??= 'postgres://drydock:drydock@127.0.0.1:5432/drydock';
  env.REDIS_URL ??= 'redis://127.0.0.1:6379/0';
  env.DRYDOCK_ADMIN_KEY ??= 'dev-admin-key-0123456789abcdef';
  // The gateway refuses to start without it; benches sign no links.
  env.ARTIFACTS_SIGNING_SECRET ??= 'bench-signing-secret-0123456789abcdef0123';

  const totalBytes = Math.round(options.mb * MiB);
  if (totalBytes <= BIG_FILE_BYTES) throw new BenchError(`--mb must leave room beside the ${mib(BIG_FILE_BYTES)} MiB file`);

  let t = performance.now();
  const data = generate(options.files, totalBytes, options.seed);
  const genMs = performance.now() - t;
  const rareFiles = data.files.filter((f) => f.rareLines.length > 0).length;
  const commonFiles = data.files.filter((f) => f.commonLines.length > 0).length;
  const commonLines = data.files.reduce((s, f) => s + f.commonLines.length, 0);
  const totalLines = data.files.reduce((s, f) => s + (f.content.match(/\n/g)?.length ?? 0), 0);
  const bigLines = data.big.content.split('\n').length - 1;

  // Loaded only now: the app modules read the environment when they are imported.
  const { createGateway } = await import('../../apps/gateway/src/bootstrap.js');
  await runMigrations(env.DATABASE_URL).catch((error: Error) => {
    throw new BenchError(`migrating ${env.DATABASE_URL} failed (is PostgreSQL up?): ${error.message}`);
  });
  const app: INestApplication = await createGateway({ logger: false });
  // Closed whatever happens, so the process exits by itself.
  try {
    const vfs = app.get(VfsService);
    const config = app.get<AppConfig>(APP_CONFIG);
    const db = app.get(DataSource);
    if (config.vfs.maxFileBytes < BIG_FILE_BYTES) {
      throw new BenchError(`VFS_MAX_FILE_BYTES (${config.vfs.maxFileBytes}) is below the ${BIG_FILE_BYTES}-byte file`);
    }
    const suffix = randomBytes(4).toString('hex');
    const { tenant, apiKey } = await app
      .get(TenantsService)
      .create(`bench-vfs-${suffix}`, { vfsBytes: Math.max(2 * 1024 ** 3, 4 * totalBytes) });
    const scope: ThreadScope = { tenantId: tenant.id, threadId: `bench-vfs-${suffix}` };
    const singleScope: ThreadScope = { tenantId: tenant.id, threadId: `bench-vfs-${suffix}-single` };

    const [{ version: pgVersion }] = (await db.query(`SELECT current_setting('server_version') AS version`)) as { version: string }[];
    console.log(`vfs benchmark: Node ${process.version}, PostgreSQL ${pgVersion}, ${cpus().length} × ${cpus()[0]?.model.trim() ?? 'CPU'}`);
    console.log(`tenant ${tenant.id}, thread ${scope.threadId}`);
    console.log(
      `data: ${fmtInt(data.files.length)} files, ${mib(data.bytes)} MiB, ${fmtInt(totalLines)} lines (seed ${options.seed}, ` +
        `generated in ${fmtMs(genMs)} ms); ${LS_DIR} holds ${fmtInt(data.lsCount)}, ${fmtInt(data.tsPaths.length)} are .ts; ` +
        `${BIG_FILE} ${mib(data.big.content.length)} MiB, ${fmtInt(bigLines)} lines`,
    );
    console.log(
      `grep literals: rare "${RARE}" in ${rareFiles} files; common "${COMMON}" in ${fmtInt(commonLines)} lines of ${fmtInt(commonFiles)} files`,
    );

    let cleanupFailed = false;
    try {
      // --- writes ------------------------------------------------------------------
      const writeRows: string[][] = [];
      const batchMs: number[] = [];
      t = performance.now();
      for (let i = 0; i < data.files.length; i += options.batch) {
        const batch = data.files.slice(i, i + options.batch);
        const { ms, result } = await time(() => vfs.writeMany(scope, batch.map((f) => ({ path: f.path, content: f.content }))));
        expect(result.length === batch.length && result.every((w) => w.created), `writeMany returned ${result.length} results`);
        batchMs.push(ms);
      }
      const bulkMs = performance.now() - t;
      const b = stats(batchMs);
      writeRows.push([
        `writeMany × ${batchMs.length} (≤${fmtInt(options.batch)} files each)`,
        fmtInt(data.files.length),
        mib(data.bytes),
        `${(bulkMs / 1000).toFixed(2)} s`,
        `${(bulkMs / data.files.length).toFixed(2)} ms`,
        (data.bytes / MiB / (bulkMs / 1000)).toFixed(1),
        `< ${TARGET_BULK_S} s: ${verdict(bulkMs, TARGET_BULK_S * 1000)}`,
      ]);
      writeRows.push([`  per batch: min ${fmtMs(b.min)} / p50 ${fmtMs(b.p50)} / max ${fmtMs(b.max)} ms`, '', '', '', '', '', '']);
      const planner = await plannerStats(db);

      let singleMsPerFile = NaN;
      if (options.single > 0) {
        // A sample of the same kind of files, one write() each, into a second thread of
        // the same tenant (so the measured thread keeps exactly --files files).
        const sample = data.files.slice(0, Math.min(options.single, data.files.length - 1));
        const sampleBytes = sample.reduce((s, f) => s + f.content.length, 0);
        const { ms } = await time(async () => {
          for (const f of sample) {
            const w = await vfs.write(singleScope, f.path, f.content);
            expect(w.created, `write(${f.path}) did not create it`);
          }
        });
        singleMsPerFile = ms / sample.length;
        writeRows.push([
          `write() one by one (sample)`,
          fmtInt(sample.length),
          mib(sampleBytes),
          `${(ms / 1000).toFixed(2)} s`,
          `${singleMsPerFile.toFixed(2)} ms`,
          (sampleBytes / MiB / (ms / 1000)).toFixed(1),
          '',
        ]);
        const extrapolated = singleMsPerFile * data.files.length;
        writeRows.push([
          `  extrapolated to ${fmtInt(data.files.length)} files`,
          fmtInt(data.files.length),
          mib(data.bytes),
          `≈${(extrapolated / 1000).toFixed(1)} s`,
          '',
          '',
          `< ${TARGET_BULK_S} s: ${verdict(extrapolated, TARGET_BULK_S * 1000)}`,
        ]);
      }

      const [stored] = (await db.query(
        `SELECT count(*) AS files, sum(size) AS bytes, sum(pg_column_size(text_content)) AS stored
           FROM thread_files WHERE tenant_id = $1 AND thread_id = $2 AND NOT deleted`,
        [scope.tenantId, scope.threadId],
      )) as { files: string; bytes: string; stored: string }[];
      expect(Number(stored!.files) === data.files.length && Number(stored!.bytes) === data.bytes, `stored ${stored!.files} files / ${stored!.bytes} bytes`);

      console.log('\nwrites (run once)');
      console.log(table(['', 'files', 'MiB', 'time', 'per file', 'MiB/s', 'target'], writeRows));
      console.log(
        `stored text: ${mib(Number(stored!.stored))} MiB after compression (pg_column_size, ` +
          `${((Number(stored!.stored) / data.bytes) * 100).toFixed(0)}% of ${mib(data.bytes)} MiB)`,
      );

      console.log(`writeMany batches in order (ms): ${batchMs.map((x) => x.toFixed(0)).join(' ')}`);
      console.log(`thread_files planner statistics after the bulk write: ${planner}`);
      if (options.analyze) {
        const { ms } = await time(() => db.query('ANALYZE thread_files'));
        console.log(`--analyze: ANALYZE thread_files took ${fmtMs(ms)} ms`);
      }

      // --- reads -------------------------------------------------------------------
      const readRows: string[][] = [];
      const row = (label: string, s: ReturnType<typeof stats>, result: string, target = '') =>
        readRows.push([label, result, String(s.n), fmtMs(s.min), fmtMs(s.p50), fmtMs(s.max), target]);

      {
        let shown = '';
        const s = await repeat(options.runs, () => vfs.ls(scope, LS_DIR), (entries) => {
          expect(entries.length === data.lsCount && entries.every((e) => e.type === 'file'), `ls gave ${entries.length} entries`);
          shown = `${fmtInt(entries.length)} entries`;
        });
        row(`ls ${LS_DIR}`, s, shown);
      }
      {
        const s = await repeat(options.runs, () => vfs.glob(scope, '**/*.ts'), (paths) => {
          expect(paths.length === data.tsPaths.length && paths.every((p, i) => p === data.tsPaths[i]), `glob gave ${paths.length} paths`);
        });
        row(`glob **/*.ts`, s, `${fmtInt(data.tsPaths.length)} paths`);
      }

      const cases: GrepCase[] = [];
      for (const [name, pattern] of [['rare', RARE], ['common', COMMON]] as const) {
        for (const mode of ['files_with_matches', 'count', 'content'] as const) {
          cases.push({ label: `grep ${name} literal, ${mode}`, pattern, mode });
        }
      }
      for (const mode of ['count', 'content'] as const) {
        cases.push({ label: `grep common literal, ${mode}, maxMatches ${fmtInt(GREP_FULL_MAX)}`, pattern: COMMON, mode, maxMatches: GREP_FULL_MAX });
      }
      for (const c of cases) {
        const check = grepChecker(data, c);
        let shown = '';
        const s = await repeat(
          options.runs,
          () => vfs.grep(scope, c.pattern, { outputMode: c.mode, maxMatches: c.maxMatches }),
          (r) => {
            shown = check(r);
          },
        );
        row(c.label, s, shown, `< ${TARGET_GREP_MS} ms: ${verdict(s.p50, TARGET_GREP_MS)}`);
      }

      const offset = Math.floor(bigLines / 2);
      const page = expectedPage(data.big.content, offset, READ_LIMIT);
      const readLabel = `read ${BIG_FILE} offset ${fmtInt(offset)} limit ${READ_LIMIT}`;
      {
        const s = await repeat(options.runs, () => vfs.read(scope, BIG_FILE, { offset, limit: READ_LIMIT }), (text) => {
          expect(text === page, 'read: the page differs from the file');
        });
        row(readLabel, s, `${READ_LIMIT} lines`, `< ${TARGET_READ_MS} ms: ${verdict(s.p50, TARGET_READ_MS)}`);
      }
      if (options.rest) {
        await app.listen(0, '127.0.0.1');
        const { port } = app.getHttpServer().address() as AddressInfo;
        const url =
          `http://127.0.0.1:${port}/v1/threads/${encodeURIComponent(scope.threadId)}/files/read` +
          `?path=${encodeURIComponent(BIG_FILE)}&offset=${offset}&limit=${READ_LIMIT}`;
        const get = async () => {
          const res = await fetch(url, { headers: { authorization: `Bearer ${apiKey}` } });
          const body = (await res.json()) as { content?: string };
          return { status: res.status, body };
        };
        const s = await repeat(options.runs, get, ({ status, body }) => {
          expect(status === 200 && body.content === page, `GET .../files/read answered ${status}`);
        });
        row(`  same via GET /v1/threads/:id/files/read`, s, `${READ_LIMIT} lines`, `< ${TARGET_READ_MS} ms: ${verdict(s.p50, TARGET_READ_MS)}`);
      }

      console.log(`\nreads (ms; one warm-up, then ${options.runs} timed runs each; every answer checked)`);
      console.log(table(['', 'result', 'n', 'min', 'p50', 'max', 'target (p50)'], readRows, 2));
    } finally {
      // Deletes leave tombstones (small rows without content) for the container sync.
      try {
        const { ms, result } = await time(() => vfs.delete(scope, '/'));
        const single = options.single > 0 ? (await vfs.delete(singleScope, '/')).deleted.length : 0;
        console.log(
          `\ncleanup: delete '/' of the thread: ${fmtInt(result.deleted.length)} files in ${fmtMs(ms)} ms` +
            (single ? ` (+ ${fmtInt(single)} files of the write() sample thread)` : ''),
        );
      } catch (error) {
        cleanupFailed = true;
        console.error(`cleanup failed: ${(error as Error).message}`);
      }
    }
    if (cleanupFailed) process.exitCode = 1;
  } finally {
    await app.close();
  }
}

main().catch((error: unknown) => {
  console.error(`\nvfs benchmark aborted: ${error instanceof BenchError ? error.message : ((error as Error)?.stack ?? error)}`);
  process.exitCode = 1;
});
