import type { CompletedRun, ExecuteJobData, ExecutionRecord, ExecutionsRepository } from '@drydock/execution';
import type { SessionRecord, SessionsRepository } from '@drydock/sessions';
import { DatasetRegistry } from '@drydock/sessions';
import { makeConfig } from '../../../../test/factories/config.factory.js';
import { makeLimits } from '../../../../test/factories/limits.factory.js';
import { FakeRuntime, inMemoryVfs, okOutcome } from '../../../../test/fakes/fake-sandbox.js';
import type { ArtifactIngester } from './artifact-ingester.js';
import { SessionFileSync } from './session-file-sync.js';

// Artifact ingestion has its own e2e tests; here no run leaves any.
const noArtifacts = { ingest: async () => ({ artifacts: [], skipped: [] }) } as unknown as ArtifactIngester;
import { SessionHostService } from './session-host.service.js';

const ok = okOutcome;

function fakeSessions(row: Partial<SessionRecord> = {}): SessionsRepository {
  const session = { id: 'ses_1', tenantId: 'ten_1', status: 'ready', containerId: null, ...row } as SessionRecord;
  return {
    findById: async () => session,
    recordContainer: async (_t: string, _s: string, containerId: string) => {
      session.containerId = containerId;
    },
    touch: async () => undefined,
    touchMany: async () => undefined,
    end: async () => undefined,
    listLiveOnWorker: async () => [],
  } as unknown as SessionsRepository;
}

function fakeExecutions() {
  const records = new Map<string, Partial<ExecutionRecord>>();
  const repo = {
    records,
    markRunning: async (_t: string, id: string) => {
      const record = records.get(id) ?? { id, status: 'queued' };
      if (record.status !== 'queued') return false;
      records.set(id, { ...record, status: 'running' });
      return true;
    },
    findById: async (_t: string, id: string) => ({ ...records.get(id), createdAt: new Date(), finishedAt: null }),
    complete: async (_t: string, id: string, outcome: CompletedRun) => {
      const record = { ...records.get(id), ...outcome, id, createdAt: new Date(), finishedAt: new Date() };
      records.set(id, record);
      return record;
    },
  };
  return repo as unknown as ExecutionsRepository & { records: typeof records };
}

const job = (executionId: string): ExecuteJobData => ({
  executionId,
  code: '1',
  timeoutMs: 1000,
  session: { sessionId: 'ses_1', tenantId: 'ten_1', threadId: 'thr_1', limits: makeLimits() },
});

describe(SessionHostService.name, () => {
  let runtime: FakeRuntime;
  let executions: ReturnType<typeof fakeExecutions>;

  const claimed = new Set<string>();
  const guard = { claim: async (id: string) => !claimed.has(id) && !!claimed.add(id) };
  let files: ReturnType<typeof inMemoryVfs>;
  const create = (sessions = fakeSessions()) =>
    new SessionHostService(
      makeConfig(),
      runtime,
      sessions,
      executions,
      guard,
      new SessionFileSync(files.vfs, files.config),
      noArtifacts,
      new DatasetRegistry(makeConfig()),
    );

  beforeEach(() => {
    claimed.clear();
    runtime = new FakeRuntime();
    executions = fakeExecutions();
    files = inMemoryVfs();
  });

  it('should return the stored execution for a redelivered job without running it again', async () => {
    const sut = create();
    const first = await sut.execute(job('exe_1'));
    const again = await sut.execute(job('exe_1'));
    expect(again.id).toBe(first.id);
    expect(runtime.created[0]!.runs).toHaveLength(1);
  });

  it('should not run the code when the run-once claim cannot be made', async () => {
    const sut = create();
    const claim = guard.claim;
    guard.claim = async () => {
      throw new Error('redis is down');
    };
    try {
      await expect(sut.execute(job('exe_1'))).rejects.toThrow('redis is down');
    } finally {
      guard.claim = claim;
    }
    expect(runtime.created[0]?.runs ?? []).toHaveLength(0);
    expect(executions.records.get('exe_1')?.status).not.toBe('ok');
    // The session stays usable.
    expect((await sut.execute(job('exe_2'))).status).toBe('ok');
  });

  it('should re-create a dead sandbox and tell the next run that state was lost', async () => {
    const sut = create();
    runtime.behaviour = async (sandbox) => {
      sandbox.alive = false;
      return ok({ status: 'memory' });
    };
    expect((await sut.execute(job('exe_1'))).status).toBe('memory');
    runtime.behaviour = async () => ok();
    const next = await sut.execute(job('exe_2'));
    expect(next.stateLost).toBe(true);
    expect(runtime.created).toHaveLength(2);
    expect((await sut.execute(job('exe_3'))).stateLost).toBe(false);
  });

  it('should report lost state when the session had a container before this worker hosted it', async () => {
    const sut = create(fakeSessions({ containerId: 'old-container' }));
    expect((await sut.execute(job('exe_1'))).stateLost).toBe(true);
    expect((await sut.execute(job('exe_2'))).stateLost).toBe(false);
  });

  it('should run the executions of one session one at a time', async () => {
    const sut = create();
    runtime.behaviour = () => new Promise((resolve) => setTimeout(() => resolve(ok()), 20));
    await Promise.all([sut.execute(job('a')), sut.execute(job('b')), sut.execute(job('c'))]);
    expect(runtime.created).toHaveLength(1);
    expect(runtime.created[0]!.maxConcurrent).toBe(1);
  });

  it('should report a sandbox that cannot start as a killed run instead of failing the job', async () => {
    runtime.create = async () => {
      throw new Error('image missing');
    };
    const result = await create().execute(job('exe_1'));
    expect(result.status).toBe('killed');
    expect(result.error).toMatchObject({ name: 'SandboxUnavailable' });
  });

  describe('thread files', () => {
    const scope = { tenantId: 'ten_1', threadId: 'thr_1' };

    it('should put the thread files in the sandbox before the code runs', async () => {
      await files.vfs.write(scope, '/data/in.csv', 'a\n1\n');
      let seen: string | undefined;
      runtime.behaviour = async (sandbox) => {
        seen = sandbox.session.get('/data/in.csv')?.toString();
        return ok();
      };
      await create().execute(job('exe_1'));
      expect(seen).toBe('a\n1\n');
    });

    it('should record the files the code wrote in the thread and in the execution', async () => {
      runtime.behaviour = async (sandbox) => {
        sandbox.session.set('/out/summary.csv', Buffer.from('n\n1\n'));
        return ok({ files: { changed: ['/out/summary.csv'], deleted: [], skipped: [] } });
      };
      const view = await create().execute(job('exe_1'));
      expect(view.files).toEqual({ changed: ['/out/summary.csv'], deleted: [], skipped: [] });
      expect((await files.vfs.readContent(scope, '/out/summary.csv')).content.toString()).toBe('n\n1\n');
    });

    it('should not run the code when the files cannot be put in the sandbox', async () => {
      await files.vfs.write(scope, '/a.txt', 'x');
      const sut = create();
      await sut.start(job('x').session);
      await files.vfs.write(scope, '/b.txt', 'y');
      runtime.created[0]!.putFiles = async () => {
        throw new Error('no space left on device');
      };
      const view = await sut.execute(job('exe_1'));
      expect(view.status).toBe('killed');
      expect(view.error).toMatchObject({ name: 'FileSyncError' });
      expect(runtime.created[0]!.runs).toHaveLength(0);
    });

    it('should give a re-created sandbox all of the thread files again', async () => {
      await files.vfs.write(scope, '/a.txt', 'x');
      const sut = create();
      runtime.behaviour = async (sandbox) => {
        sandbox.alive = false;
        return ok({ status: 'memory' });
      };
      await sut.execute(job('exe_1'));
      runtime.behaviour = async () => ok();
      await sut.execute(job('exe_2'));
      expect(runtime.created[1]!.session.get('/a.txt')?.toString()).toBe('x');
    });
  });
});
