import { RateLimitedError, type TenantRateLimiter } from '@drydock/core';
import { jest } from '@jest/globals';
import {
  WorkerLostError,
  type ExecutionRecord,
  type ExecutionsRepository,
  type ExecutionView,
  type JobDispatcher,
} from '@drydock/execution';
import { makeConfig } from '../../../test/factories/config.factory.js';
import { makeLimits } from '../../../test/factories/limits.factory.js';
import { SessionExecutionsService } from './session-executions.service.js';
import { SessionsError } from './sessions.errors.js';
import type { SessionExecutionDraft, SessionRecord, SessionsRepository } from './sessions.repository.js';
import type { SessionsService } from './sessions.service.js';

// Rate limits are TenantRateLimiter's own concern (e2e: rate-limits.e2e-spec.ts).
const unlimited = {
  executionAdmission: () => ({ hold: null, push: null, countOnly: async () => undefined, release: async () => undefined }),
} as unknown as TenantRateLimiter;

const principal = { tenantId: 'ten_1', limits: {} };

function makeSession(row: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id: 'ses_1',
    tenantId: 'ten_1',
    threadId: 'thr_1',
    status: 'ready',
    workerId: 'w1',
    limits: makeLimits(),
    storage: 'tmpfs',
    datasets: [],
    containerId: 'c1',
    createdAt: new Date(),
    lastUsedAt: new Date(),
    endedAt: null,
    endReason: null,
    ...row,
  } as SessionRecord;
}

// The one-statement read + insert, over an in-memory session and executions table.
function fakeRepository(session: SessionRecord | null) {
  const executions = new Map<string, ExecutionRecord>();
  const calls: SessionExecutionDraft[] = [];
  const repo = {
    session,
    executions,
    calls,
    async findWithNewExecution(tenantId: string, sessionId: string, draft: SessionExecutionDraft) {
      calls.push(draft);
      const s = repo.session && repo.session.tenantId === tenantId && repo.session.id === sessionId ? { ...repo.session } : null;
      if (!s) return { session: null, execution: null };
      if (s.status !== 'starting' && s.status !== 'ready') return { session: s, execution: null };
      const existing = [...executions.values()].find((e) => draft.idempotencyKey && e.idempotencyKey === draft.idempotencyKey);
      if (existing) return { session: s, execution: { record: existing, created: false } };
      const record = {
        id: draft.id,
        tenantId,
        sessionId,
        threadId: s.threadId,
        kind: draft.kind,
        background: draft.background,
        codeSha256: draft.codeSha256,
        status: 'queued',
        stdout: '',
        stderr: '',
        truncated: false,
        result: null,
        error: null,
        stateLost: false,
        files: { changed: [], deleted: [], skipped: [] },
        artifacts: [],
        artifactsSkipped: [],
        durationMs: null,
        idempotencyKey: draft.idempotencyKey,
        timeoutMs: Math.min(draft.requestedTimeoutMs ?? s.limits.timeoutMs, draft.maxTimeoutMs),
        createdAt: new Date(),
        finishedAt: null,
      } as unknown as ExecutionRecord;
      executions.set(record.id, record);
      return { session: s, execution: { record, created: true } };
    },
  };
  return repo;
}

function fakeExecutions(repo: ReturnType<typeof fakeRepository>): ExecutionsRepository {
  return {
    findById: async (_t: string, id: string) => repo.executions.get(id) ?? null,
    listUnfinished: async (_t: string, sessionId: string) =>
      [...repo.executions.values()].filter((e) => e.sessionId === sessionId && ['queued', 'running'].includes(e.status)).map((e) => e.id),
    discardQueued: async (_t: string, id: string) => {
      if (repo.executions.get(id)?.status === 'queued') repo.executions.delete(id);
    },
    markRunning: async () => true,
    complete: async (_t: string, id: string, outcome: Partial<ExecutionRecord>) => {
      const record = { ...repo.executions.get(id)!, ...outcome, finishedAt: new Date() } as ExecutionRecord;
      repo.executions.set(id, record);
      return record;
    },
    completeUnfinished: async (_t: string, id: string, outcome: Partial<ExecutionRecord>) => {
      const current = repo.executions.get(id);
      if (!current || !['queued', 'running'].includes(current.status)) return null;
      const record = { ...current, ...outcome, finishedAt: new Date() } as ExecutionRecord;
      repo.executions.set(id, record);
      return record;
    },
  } as unknown as ExecutionsRepository;
}

describe(SessionExecutionsService.name, () => {
  let repo: ReturnType<typeof fakeRepository>;
  let placement: {
    ensurePlaced: jest.Mock<(s: SessionRecord) => Promise<SessionRecord>>;
    markLost: jest.Mock<() => Promise<void>>;
    get: jest.Mock<() => Promise<SessionRecord>>;
  };
  let dispatched: { workerId: string; data: Record<string, unknown> }[];
  let dispatcher: JobDispatcher;
  let sut: SessionExecutionsService;

  const okView = (data: { executionId: string }): ExecutionView =>
    ({ id: data.executionId, status: 'ok', stdout: '1\n' }) as unknown as ExecutionView;

  beforeEach(() => {
    repo = fakeRepository(makeSession());
    dispatched = [];
    placement = {
      ensurePlaced: jest.fn(async (s: SessionRecord) => s),
      markLost: jest.fn(async () => undefined),
      get: jest.fn(async () => repo.session!),
    };
    dispatcher = {
      // As the real one: the job is pushed (by the caller's push when it gives one) before
      // the worker can answer.
      dispatch: jest.fn(async (workerId: string, _name: string, data: Record<string, unknown>, options?: { push?: (lane: string, payload: string) => Promise<void> }): Promise<unknown> => {
        await options?.push?.(`lane:${workerId}`, JSON.stringify(data));
        dispatched.push({ workerId, data });
        return okView(data as { executionId: string });
      }),
      subscribeOutput: jest.fn(async () => async () => undefined),
      interrupt: jest.fn(async () => undefined),
      markInterrupted: jest.fn(async () => undefined),
      interruptRequested: jest.fn(async () => false),
    } as unknown as JobDispatcher;
    sut = new SessionExecutionsService(
      makeConfig(),
      fakeExecutions(repo),
      dispatcher,
      repo as unknown as SessionsRepository,
      placement as unknown as SessionsService,
      unlimited,
    );
  });

  it('should record the execution and dispatch it to the session\'s worker with the clamped timeout', async () => {
    const view = await sut.execute({ tenantId: 'ten_1', limits: { timeoutMs: 5_000 } }, 'ses_1', { code: 'print(1)', timeoutMs: 60_000 });

    expect(view.status).toBe('ok');
    expect(repo.calls).toHaveLength(1);
    expect(dispatched).toEqual([
      {
        workerId: 'w1',
        data: expect.objectContaining({ executionId: view.id, code: 'print(1)', timeoutMs: 5_000, stream: false }),
      },
    ]);
    expect(repo.executions.get(view.id)?.timeoutMs).toBe(5_000);
  });

  it('should ask the worker to publish output only when the caller relays it', async () => {
    await sut.execute(principal, 'ses_1', { code: 'print(1)' }, () => undefined);

    expect(dispatched[0]!.data.stream).toBe(true);
    expect(dispatcher.subscribeOutput).toHaveBeenCalledTimes(1);
  });

  describe('interrupts', () => {
    it('should ask the session\'s worker to stop the execution when the caller\'s signal aborts', async () => {
      const abort = new AbortController();
      let interruptedWhileRunning: unknown[][] = [];
      (dispatcher.dispatch as jest.Mock<(w: string, n: string, data: { executionId: string }) => Promise<unknown>>).mockImplementation(async (_w, _n, data) => {
        abort.abort();
        interruptedWhileRunning = [...(dispatcher.interrupt as jest.Mock).mock.calls];
        return okView(data);
      });
      const view = await sut.execute(principal, 'ses_1', { code: 'while True: pass' }, undefined, { signal: abort.signal });

      expect(interruptedWhileRunning).toEqual([['w1', view.id]]);
      expect(dispatcher.interrupt).toHaveBeenCalledTimes(1);
    });

    it('should send the interrupt before the job when the signal was aborted already', async () => {
      const abort = new AbortController();
      abort.abort();
      let interruptsBeforeDispatch = -1;
      (dispatcher.dispatch as jest.Mock<(w: string, n: string, data: { executionId: string }) => Promise<unknown>>).mockImplementation(async (_w, _n, data) => {
        interruptsBeforeDispatch = (dispatcher.interrupt as jest.Mock).mock.calls.length;
        return okView(data);
      });
      await sut.execute(principal, 'ses_1', { code: '1' }, undefined, { signal: abort.signal });

      expect(interruptsBeforeDispatch).toBe(1);
    });

    it('should interrupt an execution that has not finished, on its session\'s worker', async () => {
      const view = await sut.execute(principal, 'ses_1', { code: '1' });
      repo.executions.get(view.id)!.status = 'running';

      await expect(sut.interrupt('ten_1', view.id)).resolves.toMatchObject({ requested: true, execution: { id: view.id } });
      expect(dispatcher.interrupt).toHaveBeenCalledWith('w1', view.id);
      await expect(sut.interrupt('ten_1', 'exe_unknown')).rejects.toMatchObject({ code: 'EXECUTION_NOT_FOUND' });
    });

    it("should mark the execution interrupted before it reads the session's worker", async () => {
      const view = await sut.execute(principal, 'ses_1', { code: '1' });
      repo.executions.get(view.id)!.status = 'queued';
      placement.get.mockClear();

      await sut.interrupt('ten_1', view.id);

      // A gateway resending the job after SESSION_MOVED checks the mark after it placed
      // the session again: either it finds the mark, or this read finds the new worker.
      const order = (mock: jest.Mock) => mock.mock.invocationCallOrder[0]!;
      expect(order(dispatcher.markInterrupted as jest.Mock)).toBeLessThan(order(placement.get));
      expect(order(placement.get)).toBeLessThan(order(dispatcher.interrupt as jest.Mock));
    });

    it("should mark a session's unfinished executions before it reads its worker", async () => {
      const view = await sut.execute(principal, 'ses_1', { code: '1' });
      repo.executions.get(view.id)!.status = 'running';
      placement.get.mockClear();

      await expect(sut.interruptSession('ten_1', 'ses_1')).resolves.toEqual([view.id]);

      const marked = (dispatcher.markInterrupted as jest.Mock).mock.invocationCallOrder[0]!;
      const reads = placement.get.mock.invocationCallOrder;
      expect(reads.some((at) => at > marked)).toBe(true);
      expect(Math.max(...reads)).toBeLessThan((dispatcher.interrupt as jest.Mock).mock.invocationCallOrder[0]!);
      expect(dispatcher.interrupt).toHaveBeenCalledWith('w1', view.id);
    });

    describe('when a drained worker sends the run back (SESSION_MOVED)', () => {
      const movedOnce = () => {
        const send = dispatcher.dispatch as jest.Mock<(w: string, n: string, data: { executionId: string }) => Promise<unknown>>;
        send.mockImplementationOnce(async (workerId, _n, data) => {
          dispatched.push({ workerId, data });
          throw SessionsError.moved('ses_1');
        });
        send.mockImplementation(async (workerId, _n, data) => {
          dispatched.push({ workerId, data, interruptsBefore: [...(dispatcher.interrupt as jest.Mock).mock.calls] } as never);
          return okView(data);
        });
        placement.ensurePlaced.mockImplementationOnce(async (s: SessionRecord) => s);
        placement.ensurePlaced.mockImplementationOnce(async (s: SessionRecord) => ({ ...s, workerId: 'w2' }));
      };
      const interruptsBeforeResend = () => (dispatched[1] as unknown as { interruptsBefore: unknown[][] }).interruptsBefore;

      it('should send an interrupt marked meanwhile to the next worker ahead of the job', async () => {
        movedOnce();
        (dispatcher.interruptRequested as jest.Mock<() => Promise<boolean>>).mockResolvedValue(true);

        const view = await sut.execute(principal, 'ses_1', { code: 'while True: pass' });

        expect(dispatched.map((d) => d.workerId)).toEqual(['w1', 'w2']);
        expect(dispatcher.interruptRequested).toHaveBeenCalledWith(view.id);
        expect(interruptsBeforeResend()).toEqual([['w2', view.id]]);
      });

      it("should send the caller's own interrupt to the next worker too", async () => {
        const abort = new AbortController();
        movedOnce();
        placement.ensurePlaced.mockReset();
        placement.ensurePlaced.mockImplementationOnce(async (s: SessionRecord) => s);
        placement.ensurePlaced.mockImplementationOnce(async (s: SessionRecord) => {
          abort.abort(); // while the first worker still held the job
          return { ...s, workerId: 'w2' };
        });

        const view = await sut.execute(principal, 'ses_1', { code: 'while True: pass' }, undefined, { signal: abort.signal });

        expect(interruptsBeforeResend()).toEqual([
          ['w1', view.id],
          ['w2', view.id],
        ]);
      });

      it('should resend without an interrupt when none was asked for', async () => {
        movedOnce();

        await sut.execute(principal, 'ses_1', { code: '1' });

        expect(interruptsBeforeResend()).toEqual([]);
        expect(dispatcher.interrupt).not.toHaveBeenCalled();
      });
    });

    it('should send nothing for an execution that has ended', async () => {
      const view = await sut.execute(principal, 'ses_1', { code: '1' });
      repo.executions.get(view.id)!.status = 'ok';

      await expect(sut.interrupt('ten_1', view.id)).resolves.toMatchObject({ requested: false });
      expect(dispatcher.interrupt).not.toHaveBeenCalled();
    });
  });

  describe('admission', () => {
    // A limiter that notes what is asked of it; with `refuse` the push is refused.
    const limiter = ({ refuse = false } = {}) => {
      const log: string[] = [];
      const asked: Parameters<TenantRateLimiter['executionAdmission']>[] = [];
      const fake = {
        executionAdmission: (...args: Parameters<TenantRateLimiter['executionAdmission']>) => {
          asked.push(args);
          let taken = false;
          return {
            hold: { key: 'slots:ten_1', id: args[1] },
            push: async (lane: string) => {
              log.push(`push ${lane}`);
              if (refuse) throw new RateLimitedError('over', 1, {});
              taken = true;
            },
            countOnly: async () => void log.push('count'),
            release: async () => void (taken && log.push('release')),
          };
        },
      };
      return { fake: fake as unknown as TenantRateLimiter, asked, log };
    };
    const withLimiter = (rateLimits: TenantRateLimiter) =>
      new SessionExecutionsService(makeConfig(), fakeExecutions(repo), dispatcher, repo as unknown as SessionsRepository, placement as unknown as SessionsService, rateLimits);

    it('should take the admission with the push, and hand its slot to the worker', async () => {
      const { fake, log } = limiter();
      await withLimiter(fake).execute(principal, 'ses_1', { code: '1' });
      expect(log).toEqual(['push lane:w1']);
      expect(dispatched[0]!.data.slot).toEqual({ key: 'slots:ten_1', id: expect.stringMatching(/^hold_/) });
    });

    it('should leave nothing recorded and run nothing when the tenant is over a limit', async () => {
      const { fake, log } = limiter({ refuse: true });
      await expect(withLimiter(fake).execute(principal, 'ses_1', { code: '1' })).rejects.toMatchObject({ code: 'RATE_LIMITED', status: 429 });
      expect(repo.calls).toHaveLength(1);
      expect(repo.executions.size).toBe(0);
      expect(dispatched).toHaveLength(0);
      expect(log).toEqual(['push lane:w1']);
    });

    it('should keep an execution recorded by an earlier request with the same idempotency key when this one is refused', async () => {
      await sut.execute(principal, 'ses_1', { code: '1', idempotencyKey: 'k' });
      const { fake } = limiter({ refuse: true });
      await expect(withLimiter(fake).execute(principal, 'ses_1', { code: '1', idempotencyKey: 'k' })).rejects.toMatchObject({ code: 'RATE_LIMITED' });
      expect([...repo.executions.values()].map((e) => e.status)).toEqual(['queued']);
    });

    it('should count a request that cannot be recorded, and take no slot', async () => {
      const { fake, log } = limiter();
      await expect(withLimiter(fake).execute({ tenantId: 'ten_2', limits: {} }, 'ses_1', { code: '1' })).rejects.toMatchObject({
        code: 'SESSION_NOT_FOUND',
      });
      expect(log).toEqual(['count']);
    });

    it('should count the replay of a finished execution, and take no slot', async () => {
      const first = await sut.execute(principal, 'ses_1', { code: '1', idempotencyKey: 'k' });
      repo.executions.get(first.id)!.status = 'ok';
      const { fake, log } = limiter();
      const again = await withLimiter(fake).execute(principal, 'ses_1', { code: '1', idempotencyKey: 'k' });
      expect(again.id).toBe(first.id);
      expect(log).toEqual(['count']);
      expect(dispatched).toHaveLength(1);
    });

    it('should give the slot back when the run fails after the push', async () => {
      const { fake, log } = limiter();
      (dispatcher.dispatch as jest.Mock<(w: string, n: string, d: unknown, o: { push: (l: string, p: string) => Promise<void> }) => Promise<unknown>>).mockImplementationOnce(
        async (workerId, _n, _d, options) => {
          await options.push(`lane:${workerId}`, '{}');
          throw new Error('no result within 1 ms');
        },
      );
      await expect(withLimiter(fake).execute(principal, 'ses_1', { code: '1' })).rejects.toMatchObject({ code: 'EXECUTION_WAIT_TIMEOUT' });
      expect(log).toEqual(['push lane:w1', 'release']);
    });

    it('should push with the admission once: a resend after SESSION_MOVED keeps the slot it holds', async () => {
      const { fake, log } = limiter();
      const pushes: boolean[] = [];
      const send = dispatcher.dispatch as jest.Mock<(w: string, n: string, d: Record<string, unknown>, o: { push?: (l: string, p: string) => Promise<void> }) => Promise<unknown>>;
      send.mockImplementation(async (workerId, _n, data, options) => {
        pushes.push(options.push !== undefined);
        await options.push?.(`lane:${workerId}`, '{}');
        dispatched.push({ workerId, data });
        if (dispatched.length === 1) throw SessionsError.moved('ses_1');
        return okView(data as { executionId: string });
      });
      placement.ensurePlaced.mockImplementationOnce(async (s: SessionRecord) => s);
      placement.ensurePlaced.mockImplementationOnce(async (s: SessionRecord) => ({ ...s, workerId: 'w2' }));

      await withLimiter(fake).execute(principal, 'ses_1', { code: '1' });

      expect(pushes).toEqual([true, false]);
      expect(log).toEqual(['push lane:w1']);
      expect(dispatched.map((d) => [d.workerId, d.data.slot])).toEqual([
        ['w1', { key: 'slots:ten_1', id: expect.stringMatching(/^hold_/) }],
        ['w2', dispatched[0]!.data.slot],
      ]);
    });

    it('should pass on whether the request is to be counted with the admission', async () => {
      const { fake, asked } = limiter();
      await withLimiter(fake).execute(principal, 'ses_1', { code: '1' }, undefined, { countRequest: true });
      await withLimiter(fake).execute(principal, 'ses_1', { code: '1' });
      expect(asked.map((args) => args[3])).toEqual([{ countRequest: true }, {}]);
    });
  });

  it('should say the session does not exist when another tenant names it', async () => {
    await expect(sut.execute({ tenantId: 'ten_2', limits: {} }, 'ses_1', { code: '1' })).rejects.toMatchObject({
      code: 'SESSION_NOT_FOUND',
    });
    expect(dispatched).toHaveLength(0);
  });

  it('should refuse an ended session without recording anything', async () => {
    repo.session = makeSession({ status: 'ended' });
    placement.ensurePlaced.mockRejectedValue(SessionsError.ended('ses_1'));

    await expect(sut.execute(principal, 'ses_1', { code: '1' })).rejects.toMatchObject({ code: 'SESSION_ENDED' });
    expect(repo.executions.size).toBe(0);
    expect(dispatched).toHaveLength(0);
  });

  it('should place a lost session on a live worker first, then record and dispatch there', async () => {
    repo.session = makeSession({ status: 'lost' });
    placement.ensurePlaced.mockImplementation(async (s: SessionRecord) => {
      repo.session = { ...s, status: 'ready', workerId: 'w2' } as SessionRecord;
      return repo.session;
    });

    const view = await sut.execute(principal, 'ses_1', { code: '1' });

    expect(view.status).toBe('ok');
    expect(repo.executions.size).toBe(1);
    expect(dispatched.map((d) => d.workerId)).toEqual(['w2']);
  });

  it('should move a session whose worker is gone and run the recorded execution on the new worker', async () => {
    placement.ensurePlaced.mockImplementation(async (s: SessionRecord) => ({ ...s, workerId: 'w2' }));

    await sut.execute(principal, 'ses_1', { code: '1' });

    expect(repo.calls).toHaveLength(1);
    expect(dispatched.map((d) => d.workerId)).toEqual(['w2']);
  });

  it('should leave no queued execution behind when no worker can take the session', async () => {
    placement.ensurePlaced.mockRejectedValue(SessionsError.noWorker());

    await expect(sut.execute(principal, 'ses_1', { code: '1', idempotencyKey: 'k1' })).rejects.toMatchObject({
      code: 'NO_WORKER_AVAILABLE',
    });
    expect(repo.executions.size).toBe(0);
  });

  it('should return the stored execution for a repeated idempotency key without dispatching again', async () => {
    const first = await sut.execute(principal, 'ses_1', { code: 'x = 1', idempotencyKey: 'k1' });
    repo.executions.set(first.id, { ...repo.executions.get(first.id)!, status: 'ok' });

    const again = await sut.execute(principal, 'ses_1', { code: 'x = 1', idempotencyKey: 'k1' });

    expect(again.id).toBe(first.id);
    expect(dispatched).toHaveLength(1);
  });

  it('should refuse an idempotency key reused for different code', async () => {
    await sut.execute(principal, 'ses_1', { code: 'x = 1', idempotencyKey: 'k1' });

    await expect(sut.execute(principal, 'ses_1', { code: 'x = 2', idempotencyKey: 'k1' })).rejects.toMatchObject({
      code: 'IDEMPOTENCY_KEY_REUSED',
    });
  });

  it('should record a run whose worker stopped as killed and mark the session lost', async () => {
    (dispatcher.dispatch as jest.Mock<JobDispatcher['dispatch']>).mockRejectedValue(new WorkerLostError('w1'));

    const view = await sut.execute(principal, 'ses_1', { code: 'import time; time.sleep(60)' });

    expect(view).toMatchObject({ status: 'killed', error: { name: 'WorkerLost' } });
    expect(placement.markLost).toHaveBeenCalledWith('ten_1', 'ses_1');
  });

  it('should keep what the run recorded when its worker is given up for lost after the run finished', async () => {
    (dispatcher.dispatch as jest.Mock<(w: string, n: string, data: { executionId: string }) => Promise<unknown>>).mockImplementation(async (_w, _n, data) => {
      repo.executions.set(data.executionId, { ...repo.executions.get(data.executionId)!, status: 'ok', stdout: '1\n' });
      throw new WorkerLostError('w1');
    });

    const view = await sut.execute(principal, 'ses_1', { code: 'print(1)' });

    expect(view).toMatchObject({ status: 'ok', stdout: '1\n' });
    expect(placement.markLost).not.toHaveBeenCalled();
  });

  it('should answer with the stored record when the reply was missed but the run finished', async () => {
    (dispatcher.dispatch as jest.Mock<(w: string, n: string, data: { executionId: string }) => Promise<unknown>>).mockImplementation(async (_w, _n, data) => {
      repo.executions.set(data.executionId, { ...repo.executions.get(data.executionId)!, status: 'ok' });
      throw new Error(`job exec-${data.executionId} is gone and its reply was not received`);
    });

    const view = await sut.execute(principal, 'ses_1', { code: '1' });

    expect(view.status).toBe('ok');
  });

  it('should resend to the session\'s next worker a run its drained worker sent back', async () => {
    const send = dispatcher.dispatch as jest.Mock<(w: string, n: string, data: { executionId: string }) => Promise<unknown>>;
    send.mockImplementationOnce(async (workerId, _n, data) => {
      dispatched.push({ workerId, data });
      throw SessionsError.moved('ses_1');
    });
    placement.ensurePlaced.mockImplementationOnce(async (s: SessionRecord) => s);
    placement.ensurePlaced.mockImplementationOnce(async (s: SessionRecord) => ({ ...s, workerId: 'w2' }));

    const view = await sut.execute(principal, 'ses_1', { code: '1' });

    expect(view.status).toBe('ok');
    expect(dispatched.map((d) => [d.workerId, d.data.executionId])).toEqual([
      ['w1', view.id],
      ['w2', view.id],
    ]);
    expect(repo.executions.has(view.id)).toBe(true);
    // The resend is a second delivery of the execution: the worker must claim it.
    expect(dispatched.map((d) => d.data.onlyDispatch)).toEqual([true, undefined]);
  });

  it("should tell the worker when a dispatch is the execution's only one, so it can skip the run-once claim", async () => {
    await sut.execute(principal, 'ses_1', { code: '1' });
    // An idempotency key lets a retry dispatch the same execution again.
    const keyed = await sut.execute(principal, 'ses_1', { code: '1', idempotencyKey: 'k1' });
    await sut.execute(principal, 'ses_1', { code: '1', idempotencyKey: 'k1' });
    expect(dispatched.map((d) => d.data.onlyDispatch)).toEqual([true, undefined, undefined]);
    expect(dispatched[2]!.data.executionId).toBe(keyed.id);
  });

  it('should discard the queued execution when the worker refuses the job with a typed error', async () => {
    (dispatcher.dispatch as jest.Mock<JobDispatcher['dispatch']>).mockRejectedValue(SessionsError.ended('ses_1'));

    await expect(sut.execute(principal, 'ses_1', { code: '1' })).rejects.toMatchObject({ code: 'SESSION_ENDED', status: 409 });
    expect(repo.executions.size).toBe(0);
  });
});
