// bench/templates: templates against their baselines, in the same run (issue 52).
//
//   npm run build && npm run bench:templates -- [options]
//
// - Build: POST /v1/templates of a Dockerfile that installs sqlite3 from Debian, until
//   its log says `done` (the template's steps, the platform layer, the self-test, the
//   push), against `docker build --no-cache` of the same steps on the platform image by
//   hand. Interleaved, --builds of each.
// - Session start: POST /v1/sessions + print(1) from the template and from the platform
//   image, pooled (the template's poolSize and WORKER_POOL_SIZE both 2; the bench waits
//   for both pools to be full before each sample) and cold (limits no pool serves).
// - Pull: a cold template session whose image the engine does not have (the worker
//   pulls it from the registry) less a cold one whose image it has, against `docker
//   pull` of the same image from the same registry.
//
// The worker and the bench share this machine's Docker engine. By default a gateway and
// a worker are booted in this process (TEMPLATE_REGISTRY must name the registry, as
// scripts/start.sh and scripts/test.sh set it); `--url` benches a running deployment.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { api, BenchError, createTenant, fixed, openTarget, readArgs, runMain, summarize, summaryRow, SUMMARY_HEADERS, table, TARGET_ARGS, wholeNumber } from '../lib/harness.js';

const run = promisify(execFile);

const USAGE = `usage: npm run bench:templates -- [options]
  --n <n>             session-start samples of each kind       (default 20)
  --builds <n>        builds of each kind                       (default 3)
  --pulls <n>         pull samples of each kind                 (default 3)
  --url <url>         bench this running gateway instead of one in this process
  --admin-key <key>   its admin key (else DRYDOCK_ADMIN_KEY)`;

// A light template (sqlite3: the steps take seconds) and a heavier one (Node.js from
// Debian: tens of MB installed); the platform's work per build is the same for both.
const LIGHT = 'RUN apt-get update -q && apt-get install -y -q --no-install-recommends sqlite3 && rm -rf /var/lib/apt/lists/*';
const HEAVY = 'RUN apt-get update -q && apt-get install -y -q --no-install-recommends nodejs && rm -rf /var/lib/apt/lists/*';

type Call = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

async function main() {
  const values = readArgs({ n: { type: 'string' }, builds: { type: 'string' }, pulls: { type: 'string' }, ...TARGET_ARGS }, USAGE);
  const n = wholeNumber('--n', values.n, 20, 1);
  const builds = wholeNumber('--builds', values.builds, 3, 1);
  const pulls = wholeNumber('--pulls', values.pulls, 3, 1);
  const platform = await openTarget({ url: values.url, adminKey: values['admin-key'] }, { WORKER_POOL_SIZE: '2' });
  const image = process.env.SANDBOX_IMAGE ?? 'drydock/sandbox:latest';
  try {
    const admin: Call = (method, path, body) => api(platform.url, platform.adminKey, method, path, body);
    const tenant = await createTenant(platform, { name: `bench-templates-${Date.now()}` });
    const call: Call = (method, path, body) => api(platform.url, tenant.apiKey, method, path, body);
    const name = `bench-sqlite-${Date.now().toString(36)}`;
    console.log(`bench/templates: ${platform.mode}; ${n} session starts, ${builds} builds, ${pulls} pulls of each kind`);

    // Builds, interleaved with builds by hand: the heavy one first (its template is
    // deleted after), then the light one the session starts use.
    const ours = { light: [] as number[], heavy: [] as number[] };
    const byHand = { light: [] as number[], heavy: [] as number[] };
    // By hand as well: the build, then `docker push` of it to the same registry (a
    // template's build ends pushed, which a build alone does not).
    const byHandPushed = { light: [] as number[], heavy: [] as number[] };
    const registry = process.env.TEMPLATE_REGISTRY ?? '127.0.0.1:5000';
    let version = 0;
    for (const [kind, steps, target] of [['heavy', HEAVY, `${name}-heavy`], ['light', LIGHT, name]] as const) {
      for (let i = 0; i < builds; i++) {
        const started = performance.now();
        const created = await call('POST', '/v1/templates', { name: target, dockerfile: `FROM drydock\n${steps}\n# ${i}\n` });
        if (created.status !== 202) throw new BenchError(`POST /v1/templates answered ${created.status}: ${JSON.stringify(created.body)}`);
        version = created.body.version;
        const done = await followLog(platform.url, tenant.apiKey, target, version);
        if (done.status !== 'ready') throw new BenchError(`the build failed: ${done.error}`);
        ours[kind].push(performance.now() - started);
        const built = await dockerBuild(image, steps, i);
        byHand[kind].push(built);
        const ref = `${registry}/drydock-bench/by-hand:${kind}-${Date.now().toString(36)}`;
        await run('docker', ['tag', 'drydock-bench/template-by-hand', ref]);
        const pushStarted = performance.now();
        await run('docker', ['push', '-q', ref]);
        byHandPushed[kind].push(built + performance.now() - pushStarted);
        await run('docker', ['rmi', ref]).catch(() => undefined);
      }
    }
    await call('DELETE', `/v1/templates/${name}-heavy`);

    // Session starts: both pools of size 2.
    const patched = await admin('PATCH', `/admin/templates/${name}?tenantId=${tenant.id}`, { poolSize: 2 });
    if (patched.status !== 200) throw new BenchError(`PATCH /admin/templates answered ${patched.status}: ${JSON.stringify(patched.body)}`);
    const ref = `${name}:${version}`;
    const poolsFull = async () => {
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        const workers = (await admin('GET', '/admin/workers')).body.workers as { pool?: { size: number; ready: number; templates?: { template: string; size: number; ready: number }[] } }[];
        const full = workers.every((w) => {
          const pool = w.pool?.templates?.find((t) => t.template === ref);
          return w.pool && w.pool.ready >= w.pool.size && pool && pool.ready >= pool.size;
        });
        if (full) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new BenchError(`the pools (default and ${ref}) did not fill within 60 s`);
    };
    const creates = { default: [] as number[], template: [] as number[] };
    const start = async (body: Record<string, unknown>, createMs?: number[]) => {
      const started = performance.now();
      const created = await call('POST', '/v1/sessions', { threadId: `bench-${Math.random().toString(36).slice(2)}`, ...body });
      createMs?.push(performance.now() - started);
      if (created.status !== 201) throw new BenchError(`POST /v1/sessions answered ${created.status}: ${JSON.stringify(created.body)}`);
      const ran = await call('POST', `/v1/sessions/${created.body.id}/executions`, { code: 'print(1)' });
      if (ran.body?.stdout !== '1\n') throw new BenchError(`print(1) answered ${JSON.stringify(ran.body)}`);
      const ms = performance.now() - started;
      await call('DELETE', `/v1/sessions/${created.body.id}`);
      return ms;
    };
    const cold = { memoryMb: 320 };
    const starts = { pooledDefault: [] as number[], pooledTemplate: [] as number[], coldDefault: [] as number[], coldTemplate: [] as number[] };
    // Each pooled sample waits for both pools to be full: a sample taken while the other
    // pool refills would share the machine with that container's start. The order
    // alternates, so drift touches both kinds alike.
    for (let i = 0; i < n; i++) {
      const kinds = i % 2 === 0 ? (['default', 'template'] as const) : (['template', 'default'] as const);
      for (const kind of kinds) {
        await poolsFull();
        if (kind === 'default') starts.pooledDefault.push(await start({}, creates.default));
        else starts.pooledTemplate.push(await start({ template: name }, creates.template));
      }
      for (const kind of kinds) {
        if (kind === 'default') starts.coldDefault.push(await start({ limits: cold }));
        else starts.coldTemplate.push(await start({ template: name, limits: cold }));
      }
    }
    await admin('PATCH', `/admin/templates/${name}?tenantId=${tenant.id}`, { poolSize: 0 });

    // Pulls: the image out of the engine, then a cold session (its worker pulls it),
    // against a cold session with the image there and `docker pull`.
    const imageRef = await imageOf(call, name, version);
    const pulledStart: number[] = [];
    const presentStart: number[] = [];
    const dockerPull: number[] = [];
    for (let i = 0; i < pulls; i++) {
      await new Promise((r) => setTimeout(r, 12_000)); // the pool's sandboxes gone (TEMPLATE_POOL_SYNC_MS)
      await removeImage(imageRef);
      pulledStart.push(await start({ template: name, limits: cold }));
      presentStart.push(await start({ template: name, limits: cold }));
      await removeImage(imageRef);
      const started = performance.now();
      await run('docker', ['pull', '-q', imageRef]);
      dockerPull.push(performance.now() - started);
    }

    const s = {
      oursLight: summarize(ours.light),
      byHandLight: summarize(byHand.light),
      oursHeavy: summarize(ours.heavy),
      byHandHeavy: summarize(byHand.heavy),
      pushedLight: summarize(byHandPushed.light),
      pushedHeavy: summarize(byHandPushed.heavy),
      pooledDefault: summarize(starts.pooledDefault),
      pooledTemplate: summarize(starts.pooledTemplate),
      coldDefault: summarize(starts.coldDefault),
      coldTemplate: summarize(starts.coldTemplate),
      pulledStart: summarize(pulledStart),
      presentStart: summarize(presentStart),
      dockerPull: summarize(dockerPull),
    };
    const workerPull = summarize(pulledStart.map((ms, i) => ms - presentStart[i]!));
    console.log(
      '\n' +
        table(SUMMARY_HEADERS, [
          summaryRow('build sqlite3: POST /v1/templates .. done', s.oursLight, 0),
          summaryRow('build sqlite3: docker build by hand', s.byHandLight, 0),
          summaryRow('build sqlite3: docker build + push by hand', s.pushedLight, 0),
          summaryRow('build nodejs: POST /v1/templates .. done', s.oursHeavy, 0),
          summaryRow('build nodejs: docker build by hand', s.byHandHeavy, 0),
          summaryRow('build nodejs: docker build + push by hand', s.pushedHeavy, 0),
          summaryRow('start pooled: platform image', s.pooledDefault),
          summaryRow('start pooled: template', s.pooledTemplate),
          summaryRow('  of which POST /v1/sessions: platform image', summarize(creates.default)),
          summaryRow('  of which POST /v1/sessions: template', summarize(creates.template)),
          summaryRow('start cold: platform image', s.coldDefault),
          summaryRow('start cold: template', s.coldTemplate),
          summaryRow('start cold: template, image pulled', s.pulledStart, 0),
          summaryRow('  of which the pull (less a cold start)', workerPull, 0),
          summaryRow('docker pull from the registry', s.dockerPull, 0),
        ]),
    );
    const ratio = (a: number, b: number) => fixed(a / b, 2);
    console.log(`\ntargets (p50 ratios):`);
    console.log(`  pooled start, template / platform image: ${ratio(s.pooledTemplate.p50, s.pooledDefault.p50)}x (target <= 1.3)`);
    console.log(`  cold start, template / platform image:   ${ratio(s.coldTemplate.p50, s.coldDefault.p50)}x (target <= 1.3)`);
    console.log(`  build sqlite3, ours / docker build:      ${ratio(s.oursLight.p50, s.byHandLight.p50)}x (target <= 1.5; the platform's part: ${fixed((s.oursLight.p50 - s.byHandLight.p50) / 1000, 1)} s)`);
    console.log(`  build nodejs, ours / docker build:       ${ratio(s.oursHeavy.p50, s.byHandHeavy.p50)}x (target <= 1.5; the platform's part: ${fixed((s.oursHeavy.p50 - s.byHandHeavy.p50) / 1000, 1)} s)`);
    console.log(`  build sqlite3, ours / docker build + push: ${ratio(s.oursLight.p50, s.pushedLight.p50)}x (reported)`);
    console.log(`  build nodejs, ours / docker build + push:  ${ratio(s.oursHeavy.p50, s.pushedHeavy.p50)}x (reported)`);
    console.log(`  pull, worker / docker pull:              ${ratio(workerPull.p50, s.dockerPull.p50)}x (reported)`);
    await call('DELETE', `/v1/templates/${name}`);
  } finally {
    await platform.close();
  }
}

// Follows the build's log (SSE) to its `done` event.
async function followLog(url: string, key: string, name: string, version: number): Promise<{ status: string; error: string | null }> {
  const res = await fetch(`${url}/v1/templates/${name}/versions/${version}/logs`, { headers: { authorization: `Bearer ${key}` } });
  if (res.status !== 200) throw new BenchError(`the build log answered ${res.status}`);
  const text = await res.text();
  const done = /event: done\ndata: (.*)\n/.exec(text);
  if (!done) throw new BenchError('the build log ended without done');
  return JSON.parse(done[1]!);
}

// The same steps on the platform image, as a template's run (as root), by hand.
async function dockerBuild(image: string, steps: string, i: number): Promise<number> {
  const started = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = execFile('docker', ['build', '-q', '--no-cache', '-t', 'drydock-bench/template-by-hand', '-'], (error) => (error ? reject(new BenchError(`docker build failed: ${error.message}`)) : resolve()));
    child.stdin!.end(`FROM ${image}\nUSER root\n${steps}\n# ${i}\n`);
  });
  return performance.now() - started;
}

async function imageOf(call: Call, name: string, version: number): Promise<string> {
  // The image of a session's template version: from a session's record (admin view).
  const created = await call('POST', '/v1/sessions', { threadId: `bench-ref-${Date.now()}`, template: `${name}:${version}` });
  await call('DELETE', `/v1/sessions/${created.body.id}`);
  const template = (await call('GET', `/v1/templates/${name}`)).body;
  const digest = template.versions.find((v: { version: number }) => v.version === version).imageDigest as string;
  const { stdout } = await run('docker', ['images', '--digests', '--format', '{{.Repository}}@{{.Digest}}']);
  const ref = stdout.split('\n').find((line) => line.endsWith(`@${digest}`));
  if (!ref) throw new BenchError(`no local image has digest ${digest}`);
  return ref;
}

async function removeImage(ref: string): Promise<void> {
  const { stdout } = await run('docker', ['images', '-q', '--no-trunc', ref.split('@')[0]!]);
  const ids = [...new Set(stdout.split('\n').filter(Boolean))];
  const { stdout: byDigest } = await run('docker', ['image', 'inspect', '-f', '{{.Id}}', ref]).catch(() => ({ stdout: '' }));
  for (const id of new Set([...ids, byDigest.trim()].filter(Boolean))) await run('docker', ['rmi', '-f', id]).catch(() => undefined);
}

runMain('bench/templates', main);
