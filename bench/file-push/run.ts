// File-push benchmark: files put into a sandbox's /session over the host channel
// (`fs-write`, decision 014: what the worker does) against Docker's archive API
// (`PUT /containers/:id/archive` of a tar stream: what it did before, and what `docker
// cp` does), into the same container, in alternating rounds of the same run.
//
// Cases: the thread sizes bench/file-sync mirrors (100 and 1,000 files of 1 KiB), the
// 10,000 files of 10 KiB (100 MB) of issue 17's upload target, and 50 files of 2 MiB.
// Each push goes in the batches the file sync uses (500 files / 16 MiB per request).
// Every round writes new files into a folder of its own, so both paths create files and
// folders; a fresh sandbox per case.
//
// A benchmark, not a test: it prints figures and only fails when an answer is wrong.
//
//   npm run build && npm run bench:file-push -- [--rounds 5] [--cases 100x1024,1000x1024]
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import Docker from 'dockerode';
import tar from 'tar-stream';
import type { AppConfig } from '@drydock/core';
import { DockerSandboxRuntime } from '@drydock/docker-sandbox';
import type { Sandbox, SessionFileIn } from '@drydock/execution';
import { BenchError, fixed, readArgs, runMain, summarize, table, wholeNumber } from '../lib/harness.js';

const USAGE = `npm run bench:file-push -- [options]
  --rounds N     timed rounds of each path per case, alternating (default 5; 1 untimed first)
  --cases LIST   files x bytes, comma-separated (default 100x1024,1000x1024,10000x10240,50x2097152)
  --image NAME   sandbox image (default SANDBOX_IMAGE or drydock/sandbox:latest)
  --channel-dir  socket channel folder (default SANDBOX_CHANNEL_DIR or var/bench-channels)`;

// As SessionFileSync pushes them.
const BATCH_FILES = 500;
const BATCH_BYTES = 16 * 1024 * 1024;

function batches(files: SessionFileIn[]): SessionFileIn[][] {
  const out: SessionFileIn[][] = [];
  let current: SessionFileIn[] = [];
  let bytes = 0;
  for (const file of files) {
    if (current.length > 0 && (current.length >= BATCH_FILES || bytes + file.content.length > BATCH_BYTES)) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(file);
    bytes += file.content.length;
  }
  if (current.length > 0) out.push(current);
  return out;
}

// The tar stream the worker sent before fs-write: an entry per parent folder, all owned
// by the sandbox user.
function tarOf(files: SessionFileIn[]): Readable {
  const pack = tar.pack();
  const dirs = new Set<string>();
  for (const file of files) {
    const parts = file.path.slice(1).split('/');
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      if (dirs.has(dir)) continue;
      dirs.add(dir);
      pack.entry({ name: `${dir}/`, type: 'directory', mode: 0o755, mtime: file.modifiedAt, uid: 10001, gid: 10001 });
    }
    pack.entry({ name: parts.join('/'), type: 'file', size: file.content.length, mode: 0o644, mtime: file.modifiedAt, uid: 10001, gid: 10001 }, file.content);
  }
  pack.finalize();
  return pack as unknown as Readable;
}

function filesOf(folder: string, count: number, bytes: number): SessionFileIn[] {
  const content = randomBytes(bytes);
  const now = new Date();
  // Ten files a folder, as a project's tree would have them.
  return Array.from({ length: count }, (_, i) => ({ path: `/${folder}/d${Math.floor(i / 10)}/f${i}.bin`, content, modifiedAt: now }));
}

async function main(): Promise<void> {
  const args = readArgs({ rounds: { type: 'string' }, cases: { type: 'string' }, image: { type: 'string' }, 'channel-dir': { type: 'string' } }, USAGE);
  const rounds = wholeNumber('--rounds', args.rounds, 5, 1);
  const cases = (args.cases ?? '100x1024,1000x1024,10000x10240,50x2097152').split(',').map((c) => {
    const m = /^(\d+)x(\d+)$/.exec(c.trim());
    if (!m) throw new BenchError(`--cases: "${c}" is not FILESxBYTES\n\n${USAGE}`);
    return { count: Number(m[1]), bytes: Number(m[2]) };
  });
  const docker = new Docker({ socketPath: process.env.DOCKER_SOCKET ?? '/var/run/docker.sock' });
  const config = {
    docker: {
      socketPath: process.env.DOCKER_SOCKET ?? '/var/run/docker.sock',
      sandboxImage: args.image ?? process.env.SANDBOX_IMAGE ?? 'drydock/sandbox:latest',
      channelDir: args['channel-dir'] ?? process.env.SANDBOX_CHANNEL_DIR ?? 'var/bench-channels',
      preloadModules: [],
    },
  } as unknown as AppConfig;
  const runtime = new DockerSandboxRuntime(config);
  await runtime.onModuleInit();
  console.log(`file-push: ${rounds} rounds per path and case, image ${config.docker.sandboxImage}, socket channel`);
  const rows: string[][] = [];
  for (const { count, bytes } of cases) {
    const totalMb = (count * bytes) / 1e6;
    const sandbox: Sandbox = await runtime.create({
      sessionId: `bench-push-${randomBytes(3).toString('hex')}`,
      tenantId: 'bench',
      threadId: 'bench',
      workerId: 'bench-file-push',
      limits: { memoryMb: 1024, cpus: 1, timeoutMs: 60_000, pids: 128, sessionDiskMb: Math.ceil(totalMb * (2 * rounds + 2)) + 256, tmpDiskMb: 64, maxOutputBytes: 1 << 20 },
    });
    const container = docker.getContainer(sandbox.id);
    const times = { channel: [] as number[], archive: [] as number[] };
    try {
      const push = {
        channel: async (files: SessionFileIn[]) => {
          for (const batch of batches(files)) {
            const { written, refused } = await sandbox.putFiles(batch);
            if (written !== batch.length || refused.length) throw new BenchError(`fs-write put ${written} of ${batch.length}: ${JSON.stringify(refused.slice(0, 3))}`);
          }
        },
        archive: async (files: SessionFileIn[]) => {
          for (const batch of batches(files)) await container.putArchive(tarOf(batch) as unknown as NodeJS.ReadableStream, { path: '/session' });
        },
      };
      for (let round = 0; round <= rounds; round++) {
        // A B B A ...: neither path always goes first.
        const order: ('channel' | 'archive')[] = round % 2 === 0 ? ['channel', 'archive'] : ['archive', 'channel'];
        for (const path of order) {
          const files = filesOf(`${path}-${round}`, count, bytes);
          const started = performance.now();
          await push[path](files);
          const ms = performance.now() - started;
          if (round > 0) times[path].push(ms);
        }
      }
      // Both paths put the same bytes where they should be.
      const check = await sandbox.run({
        id: 'check',
        code: `import os\nprint(sum(len(fs) for d in os.listdir('/session') for _, _, fs in os.walk('/session/' + d)))`,
        timeoutMs: 60_000,
        maxOutputBytes: 1 << 20,
      });
      const expected = count * 2 * (rounds + 1);
      if (check.stdout.trim() !== String(expected)) throw new BenchError(`expected ${expected} files in /session, found ${check.stdout.trim()}`);
    } finally {
      await sandbox.destroy();
    }
    const channel = summarize(times.channel);
    const archive = summarize(times.archive);
    rows.push([
      `${count} x ${bytes >= 1 << 20 ? `${bytes / (1 << 20)} MiB` : `${bytes / 1024} KiB`}`,
      fixed(totalMb, 1),
      fixed(channel.p50, 1),
      fixed(archive.p50, 1),
      `${fixed(channel.p50 / archive.p50, 2)}x`,
      `${fixed(channel.min, 1)}-${fixed(channel.max, 1)}`,
      `${fixed(archive.min, 1)}-${fixed(archive.max, 1)}`,
    ]);
  }
  console.log(table(['case', 'MB', 'fs-write p50 ms', 'archive API p50 ms', 'fs-write / archive', 'fs-write min-max', 'archive min-max'], rows));
  console.log('fs-write / archive <= 1.00x: the channel is at least as fast (issue 57).');
}

runMain('file-push', main);
