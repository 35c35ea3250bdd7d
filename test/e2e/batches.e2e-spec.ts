import { DataSource } from 'typeorm';
import { BatchMaintenance } from '@drydock/batches';
import type { ApiClient } from './support/api-client.js';
import { startPlatform, type Platform } from './support/platform.js';
import { pollUntil } from './support/until.js';

type Tenant = ApiClient & { tenantId: string };

// Batches (API.md "Batches", issue 13) against real PostgreSQL, Redis and Docker.
describe('Batches', () => {
  let platform: Platform;
  let db: DataSource;

  beforeAll(async () => {
    platform = await startPlatform({ WORKER_BATCH_CONCURRENCY: '4', BATCH_TENANT_CONCURRENCY: '4', BATCH_DEFAULT_CONCURRENCY: '4' });
    db = platform.gateway.get(DataSource);
  });

  afterAll(async () => {
    await platform?.close();
  });

  async function submit(api: ApiClient, body: Record<string, unknown>) {
    const res = await api.post('/v1/batches', body);
    expect(res.status).toBe(202);
    return res.body as { id: string; status: string; total: number };
  }

  async function finished(api: ApiClient, id: string, timeoutMs = 120_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const batch = (await api.get(`/v1/batches/${id}`)).body;
      if ((batch.status === 'completed' || batch.status === 'cancelled') && batch.counts.running === 0) return batch;
      if (Date.now() > deadline) throw new Error(`batch ${id} did not finish: ${JSON.stringify(batch)}`);
      await new Promise((r) => setTimeout(r, 150));
    }
  }

  async function allItems(api: ApiClient, id: string) {
    const items = [];
    for (let offset = 0; ; offset += 1000) {
      const page = (await api.get(`/v1/batches/${id}/items?offset=${offset}&limit=1000`)).body.items;
      items.push(...page);
      if (page.length < 1000) return items;
    }
  }

  it('should run 200 items with mixed outcomes to the right counts, one failing item not failing the batch', async () => {
    const api = await platform.newTenant();
    const kinds = (i: number) => (i % 20 === 1 ? 'error' : i % 40 === 2 ? 'timeout' : i % 40 === 3 ? 'memory' : 'ok');
    const code = (i: number) =>
      ({
        ok: `print(${i})`,
        error: `raise ValueError("item ${i}")`,
        timeout: 'import time\ntime.sleep(30)',
        memory: 'x = bytearray(400 * 1024 * 1024)\nx[::4096] = b"1" * len(x[::4096])',
      })[kinds(i)];
    const items = Array.from({ length: 200 }, (_, i) => ({ code: code(i), id: `item-${i}` }));
    const batch = await submit(api, { items, timeoutMs: 2000, limits: { memoryMb: 128 }, metadata: { run: 'mixed' } });
    expect(batch).toMatchObject({ status: 'queued', total: 200 });
    const done = await finished(api, batch.id);
    const expected = { ok: 0, error: 0, timeout: 0, memory: 0 } as Record<string, number>;
    for (let i = 0; i < 200; i++) expected[kinds(i)]!++;
    expect(done).toMatchObject({
      status: 'completed',
      total: 200,
      counts: { queued: 0, running: 0, killed: 0, cancelled: 0, ...expected },
      metadata: { run: 'mixed' },
    });
    expect(done.startedAt).not.toBeNull();
    expect(done.finishedAt).not.toBeNull();
    const records = await allItems(api, batch.id);
    expect(records).toHaveLength(200);
    for (const item of records) {
      expect(item.id).toBe(`item-${item.index}`);
      expect(item.status).toBe(kinds(item.index));
    }
    expect(records[0]).toMatchObject({ status: 'ok', stdout: '0\n', error: null });
    expect(records[1]).toMatchObject({ status: 'error', error: { name: 'ValueError', value: 'item 1' } });
    expect(records[2]).toMatchObject({ status: 'timeout', error: { name: 'TimeoutError' } });
    const onlyErrors = (await api.get(`/v1/batches/${batch.id}/items?status=error`)).body.items;
    expect(onlyErrors.map((i: { index: number }) => i.index)).toEqual(records.filter((i) => i.status === 'error').map((i) => i.index));
  });

  it('should keep items apart: the next item sees nothing an item left behind on purpose', async () => {
    const api = await platform.newTenant();
    const hostile = [
      'import os, subprocess, json',
      'secret = 41',
      'json.leaked = True',
      'open("/session/left.txt", "w").write("x")',
      'open("/tmp/left.txt", "w").write("x")',
      'open("/dev/shm/left", "w").write("x")',
      'subprocess.Popen(["sleep", "300"], start_new_session=True)',
      'if os.fork() == 0:',
      '    os.setsid()',
      '    import time',
      '    time.sleep(300)',
      'print("left")',
    ].join('\n');
    const probe = [
      'import os, json',
      'procs = []',
      'for pid in os.listdir("/proc"):',
      '    if pid.isdigit() and int(pid) != os.getpid():',
      '        try:',
      '            procs.append(open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\\0", b" ").decode().strip())',
      '        except OSError:',
      '            pass',
      'print(json.dumps({',
      '    "secret": "secret" in globals(),',
      '    "module": hasattr(json, "leaked"),',
      '    "session": os.path.exists("/session/left.txt"),',
      '    "tmp": os.path.exists("/tmp/left.txt"),',
      '    "shm": os.path.exists("/dev/shm/left"),',
      '    "sleepers": [p for p in procs if "sleep" in p],',
      '}))',
    ].join('\n');
    // One at a time, so the probe runs after the hostile item, on the same worker.
    const batch = await submit(api, { items: [{ code: hostile }, { code: probe }, { code: hostile }, { code: probe }], concurrency: 1 });
    await finished(api, batch.id);
    const [first, second, third, fourth] = await allItems(api, batch.id);
    expect(first).toMatchObject({ status: 'ok', stdout: 'left\n' });
    expect(third).toMatchObject({ status: 'ok', stdout: 'left\n' });
    for (const probed of [second, fourth]) {
      expect(probed.status).toBe('ok');
      expect(JSON.parse(probed.stdout)).toEqual({ secret: false, module: false, session: false, tmp: false, shm: false, sleepers: [] });
    }
  });

  it('should put each item\'s files in /session and turn what it leaves in /session/artifacts into artifacts of the batch and item', async () => {
    const api = await platform.newTenant();
    const code = [
      'import csv',
      'rows = list(csv.reader(open("/session/data/in.csv")))',
      'open("/session/artifacts/sum.txt", "w").write(str(sum(int(r[1]) for r in rows[1:])))',
      'print(len(rows))',
    ].join('\n');
    const batch = await submit(api, {
      items: [
        { code, files: { '/data/in.csv': 'name,n\na,1\nb,2\n' } },
        { code, files: { '/data/in.csv': 'name,n\nc,40\n' } },
      ],
    });
    await finished(api, batch.id);
    const [a, b] = await allItems(api, batch.id);
    expect(a).toMatchObject({ status: 'ok', stdout: '3\n' });
    expect(b).toMatchObject({ status: 'ok', stdout: '2\n' });
    expect(a.artifacts).toHaveLength(1);
    expect(a.artifacts[0]).toMatchObject({ name: 'sum.txt', batchId: batch.id, batchItem: 0, threadId: null });
    expect(b.artifacts[0]).toMatchObject({ name: 'sum.txt', batchId: batch.id, batchItem: 1 });
    const listed = (await api.get(`/v1/artifacts?batchId=${batch.id}`)).body.artifacts;
    expect(listed.map((x: { batchItem: number }) => x.batchItem).sort()).toEqual([0, 1]);
    const content = await api.get(`/v1/artifacts/${b.artifacts[0].id}/content`);
    expect(content.body).toBe('40');
  });

  it('should cancel queued items at once, and run none of them afterwards', async () => {
    const api = await platform.newTenant();
    const items = Array.from({ length: 30 }, (_, i) => ({ code: `import time\ntime.sleep(0.3)\nprint(${i})` }));
    const batch = await submit(api, { items, concurrency: 2 });
    await until(async () => (await api.get(`/v1/batches/${batch.id}`)).body.counts.ok >= 2);
    const cancel = await api.post(`/v1/batches/${batch.id}/cancel`, {});
    expect(cancel.status).toBe(202);
    expect(['cancelling', 'cancelled']).toContain(cancel.body.status);
    const cancelledAt = Date.now();
    const done = await finished(api, batch.id);
    expect(done.status).toBe('cancelled');
    expect(done.counts.cancelled).toBeGreaterThan(0);
    expect(done.counts.ok + done.counts.cancelled).toBe(30);
    const records = await allItems(api, batch.id);
    for (const item of records) {
      if (item.status === 'cancelled') expect(item.startedAt).toBeNull();
      // Nothing started after the cancel was answered (clock of the same host).
      else expect(new Date(item.startedAt).getTime()).toBeLessThan(cancelledAt);
    }
  });

  it('should kill the running items of a batch cancelled with kill', async () => {
    const api = await platform.newTenant();
    const batch = await submit(api, { items: Array.from({ length: 4 }, () => ({ code: 'import time\ntime.sleep(60)' })), concurrency: 2 });
    await until(async () => (await api.get(`/v1/batches/${batch.id}`)).body.counts.running === 2);
    expect((await api.post(`/v1/batches/${batch.id}/cancel`, { kill: true })).status).toBe(202);
    const done = await finished(api, batch.id, 30_000);
    expect(done.counts).toMatchObject({ killed: 2, cancelled: 2, running: 0, queued: 0 });
    const killed = (await api.get(`/v1/batches/${batch.id}/items?status=killed`)).body.items;
    expect(killed[0].error).toMatchObject({ name: 'Cancelled' });
  });

  it('should keep a cancelled batch cancelling, not final, until the items it had started have ended', async () => {
    const api = await platform.newTenant();
    // Two items run long enough to be cancelled mid-run; two wait behind them.
    const items = Array.from({ length: 4 }, (_, i) => ({ code: `import time\ntime.sleep(3)\nprint(${i})`, id: `c${i}` }));
    const batch = await submit(api, { items, concurrency: 2 });
    await until(async () => (await api.get(`/v1/batches/${batch.id}`)).body.counts.running === 2);
    // Follow the events from before the cancel, to see the transition.
    const stream = await fetch(`${platform.url}/v1/batches/${batch.id}/events`, { headers: { authorization: `Bearer ${keyOf(api)}` } });
    const text = stream.text();

    const cancel = await api.post(`/v1/batches/${batch.id}/cancel`, {});
    expect(cancel.status).toBe(202);
    expect(cancel.body).toMatchObject({ status: 'cancelling', finishedAt: null, counts: { running: 2, cancelled: 2, queued: 0 } });
    expect((await api.get(`/v1/batches/${batch.id}`)).body.status).toBe('cancelling');

    // A client that stops at the first final status it reads misses nothing.
    let final;
    for (;;) {
      final = (await api.get(`/v1/batches/${batch.id}`)).body;
      if (final.status === 'completed' || final.status === 'cancelled') break;
      expect(final.status).toBe('cancelling');
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(final).toMatchObject({ status: 'cancelled', counts: { queued: 0, running: 0, ok: 2, cancelled: 2 } });
    expect(final.finishedAt).not.toBeNull();
    const results = String((await api.get(`/v1/batches/${batch.id}/results`)).body).trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(results.map((r) => r.status)).toEqual(['ok', 'ok', 'cancelled', 'cancelled']);

    const events = parseSse(await text);
    const progress = events.filter((e) => e.event === 'progress').map((e) => e.data);
    expect(progress.map((b) => b.status)).toContain('cancelling');
    for (const b of progress) if (b.status === 'cancelled') expect(b.counts.running).toBe(0);
    // The item events of the two that ran: not asserted whole, since the stream can end
    // on its read of the final batch before the last item's event arrives (published
    // after the row that made the batch final; a race of the stream, left open).
    for (const e of events.filter((e) => e.event === 'item')) expect(e.data).toMatchObject({ status: 'ok', id: expect.stringMatching(/^c[01]$/) });
    expect(events[events.length - 1]).toMatchObject({ event: 'done', data: { status: 'cancelled', counts: { ok: 2, running: 0 } } });
  });

  it('should answer 404 for another tenant\'s batch on every route', async () => {
    const owner = await platform.newTenant();
    const other = await platform.newTenant();
    const batch = await submit(owner, { items: [{ code: 'print(1)' }] });
    for (const path of ['', '/items', '/results', '/events']) {
      const res = await other.get(`/v1/batches/${batch.id}${path}`);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('BATCH_NOT_FOUND');
    }
    const cancel = await other.post(`/v1/batches/${batch.id}/cancel`, {});
    expect(cancel.status).toBe(404);
    expect((await other.get('/v1/batches')).body.batches).toEqual([]);
    expect((await owner.get('/v1/batches')).body.batches.map((b: { id: string }) => b.id)).toEqual([batch.id]);
  });

  it('should start a small batch of one tenant before a large earlier batch of another finishes', async () => {
    const large = await platform.newTenant({ batchConcurrency: 2 });
    const small = await platform.newTenant({ batchConcurrency: 2 });
    const a = await submit(large, { items: Array.from({ length: 16 }, () => ({ code: 'import time\ntime.sleep(0.4)' })) });
    await until(async () => (await large.get(`/v1/batches/${a.id}`)).body.counts.running > 0);
    const b = await submit(small, { items: Array.from({ length: 3 }, (_, i) => ({ code: `print(${i})` })) });
    const doneB = await finished(small, b.id);
    const doneA = await finished(large, a.id);
    expect(doneB.counts.ok).toBe(3);
    // The order, not the time: B's last item finished before A's last item started.
    const aItems = await allItems(large, a.id);
    const lastAStart = Math.max(...aItems.map((i) => new Date(i.startedAt).getTime()));
    expect(new Date(doneB.finishedAt).getTime()).toBeLessThan(lastAStart);
    expect(doneA.counts.ok).toBe(16);
    // A never ran more than its limit at once.
    const spans = aItems.map((i) => [new Date(i.startedAt).getTime(), new Date(i.finishedAt).getTime()]);
    const overlap = Math.max(...spans.map(([s]) => spans.filter(([s2, e2]) => s2! <= s! && s! < e2!).length));
    expect(overlap).toBeLessThanOrEqual(2);
  });

  it('should not let batch items delay an interactive execution', async () => {
    const api = await platform.newTenant({ batchConcurrency: 8 });
    const session = await api.createSession({ threadId: 'beside-a-batch' });
    const batch = await submit(api, { items: Array.from({ length: 8 }, () => ({ code: 'import time\ntime.sleep(1.5)' })), concurrency: 8 });
    await until(async () => (await api.get(`/v1/batches/${batch.id}`)).body.counts.running >= 4);
    const res = await api.execute(session.id, 'print("interactive")');
    expect(res.body).toMatchObject({ status: 'ok', stdout: 'interactive\n' });
    // It was answered while the batch's items still held every batch slot.
    expect((await api.get(`/v1/batches/${batch.id}`)).body.counts.running).toBeGreaterThan(0);
    await finished(api, batch.id);
  });

  it('should take 10,000 items as one NDJSON request and stream the finished ones back as NDJSON', async () => {
    const api = await platform.newTenant();
    const lines = [JSON.stringify({ concurrency: 4, metadata: { source: 'ndjson' } })];
    for (let i = 0; i < 10_000; i++) lines.push(JSON.stringify({ code: `print(${i})`, id: `n${i}` }));
    const res = await api.request('POST', '/v1/batches', {
      body: lines.join('\n') + '\n',
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'queued', total: 10_000 });
    const id = res.body.id;
    // Let some run, then cancel the rest: 10,000 containers would be a benchmark.
    await until(async () => (await api.get(`/v1/batches/${id}`)).body.counts.ok >= 4);
    await api.post(`/v1/batches/${id}/cancel`, {});
    const done = await finished(api, id);
    expect(done.counts.ok + done.counts.cancelled).toBe(10_000);
    const results = await api.get(`/v1/batches/${id}/results`);
    expect(results.headers.get('content-type')).toMatch(/application\/x-ndjson/);
    const rows = String(results.body).trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(rows).toHaveLength(10_000);
    rows.forEach((row, i) => expect(row).toMatchObject({ index: i, id: `n${i}` }));
    const ran = rows.filter((r) => r.status === 'ok');
    expect(ran.length).toBe(done.counts.ok);
    for (const r of ran) expect(r.stdout).toBe(`${r.index}\n`);
  });

  it('should stream progress, each item and done as server-sent events', async () => {
    const api = await platform.newTenant();
    const batch = await submit(api, { items: Array.from({ length: 5 }, (_, i) => ({ code: `print(${i})`, id: `e${i}` })) });
    const res = await fetch(`${platform.url}/v1/batches/${batch.id}/events`, { headers: { authorization: `Bearer ${keyOf(api)}` } });
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const events = parseSse(await res.text());
    expect(events[0]!.event).toBe('progress');
    expect(events[events.length - 1]).toMatchObject({ event: 'done', data: { status: 'completed', counts: { ok: 5 } } });
    const items = events.filter((e) => e.event === 'item').map((e) => e.data.id).sort();
    // Items that ended before the stream opened are in the first progress counts.
    expect(items.length + events[0]!.data.counts.ok).toBeGreaterThanOrEqual(5);
    expect(new Set(items).size).toBe(items.length);
  });

  it('should return the existing batch for a repeated idempotency key', async () => {
    const api = await platform.newTenant();
    const first = await submit(api, { items: [{ code: 'print(1)' }], idempotencyKey: 'nightly-1' });
    const again = await api.post('/v1/batches', { items: [{ code: 'print(1)' }, { code: 'print(2)' }], idempotencyKey: 'nightly-1' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: first.id, total: 1 });
    expect((await api.get('/v1/batches')).body.batches).toHaveLength(1);
  });

  describe('bad input', () => {
    let api: Tenant;
    beforeAll(async () => {
      api = await platform.newTenant();
    });

    const ndjson = (text: string) => api.request('POST', '/v1/batches', { body: text, headers: { 'content-type': 'application/x-ndjson' } });

    it.each([
      ['no items', { items: [] }, 400, 'BATCH_EMPTY', undefined],
      ['items not an array', { items: 'print(1)' }, 400, 'INVALID_BATCH_OPTIONS', undefined],
      ['code not a string', { items: [{ code: 'print(1)' }, { code: 42 }] }, 400, 'INVALID_BATCH_ITEM', 1],
      ['a bad file path', { items: [{ code: '1', files: { '/ok.txt': 'x' } }, { code: '1' }, { code: '1', files: { '../etc/passwd': 'x' } }] }, 400, 'INVALID_BATCH_ITEM', 2],
      ['a file in /artifacts', { items: [{ code: '1', files: { '/artifacts/x': 'x' } }] }, 400, 'INVALID_BATCH_ITEM', 0],
      ['an unknown item field', { items: [{ code: '1', timeout: 5 }] }, 400, 'INVALID_BATCH_ITEM', 0],
      ['an unknown option', { items: [{ code: '1' }], timeout: 5 }, 400, 'INVALID_BATCH_OPTIONS', undefined],
      ['a bad option value', { items: [{ code: '1' }], concurrency: 0 }, 400, 'INVALID_BATCH_OPTIONS', undefined],
    ])('should refuse %s with a 4xx and a stable code', async (_name, body, status, code, index) => {
      const res = await api.post('/v1/batches', body);
      expect(res.status).toBe(status);
      expect(res.body.error.code).toBe(code);
      if (index !== undefined) expect(res.body.error.details).toMatchObject({ index });
    });

    it('should refuse 100,001 items, naming the first one over the limit', async () => {
      const res = await api.post('/v1/batches', { items: Array.from({ length: 100_001 }, () => ({ code: '1' })) });
      expect(res.status).toBe(413);
      expect(res.body.error).toMatchObject({ code: 'BATCH_TOO_LARGE', details: { index: 100_000 } });
    });

    it('should refuse a bad NDJSON line with its line and item index', async () => {
      const res = await ndjson('{}\n{"code":"print(1)"}\n{"code":\n{"code":"print(3)"}\n');
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_NDJSON', details: { line: 3, index: 1 } });
      const bad = await ndjson('{}\n{"code":"print(1)"}\n{"code":"x","files":{"/a/../../b":"y"}}\n');
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatchObject({ code: 'INVALID_BATCH_ITEM', details: { index: 1 } });
      expect((await ndjson('')).body.error.code).toBe('BATCH_EMPTY');
      expect((await ndjson('{"concurrency":2}\n\n')).body.error.code).toBe('BATCH_EMPTY');
      expect((await ndjson('[1]\n{"code":"1"}\n')).body.error.code).toBe('INVALID_BATCH_OPTIONS');
    });

    it('should refuse a body that is neither JSON nor NDJSON, and bad query values', async () => {
      const res = await api.request('POST', '/v1/batches', { body: 'print(1)', headers: { 'content-type': 'text/plain' } });
      expect(res.status).toBe(415);
      expect((await api.get('/v1/batches?limit=0')).status).toBe(400);
      expect((await api.get('/v1/batches/bat_nope/items?status=done')).status).toBe(400);
    });

    it('should have recorded nothing for any refused batch', async () => {
      expect((await api.get('/v1/batches')).body.batches).toEqual([]);
      const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM batch_items WHERE tenant_id = $1`, [api.tenantId]);
      expect(n).toBe(0);
    });
  });

  it('should delete finished batches and their items once their retention is over', async () => {
    const api = await platform.newTenant();
    const batch = await submit(api, { items: [{ code: 'print(1)' }] });
    await finished(api, batch.id);
    const maintenance = platform.worker.get(BatchMaintenance);
    const report = await maintenance.run(new Date(Date.now() + 8 * 24 * 3600 * 1000));
    expect(report.expired).toBeGreaterThanOrEqual(1);
    expect((await api.get(`/v1/batches/${batch.id}`)).status).toBe(404);
    const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM batch_items WHERE batch_id = $1`, [batch.id]);
    expect(n).toBe(0);
  });
});

function keyOf(api: ApiClient): string {
  return (api as unknown as { key: string }).key;
}

function parseSse(text: string): { event: string; data: any }[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim())
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
      const data = JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null');
      return { event, data };
    });
}

const until = (check: () => Promise<boolean>, timeoutMs = 60_000) => pollUntil(check, timeoutMs, 100);
