import { DrydockError, ServiceUnavailableError } from '@drydock/core';
import { failedRun } from '@drydock/execution';
import { okOutcome as ok } from '../../../../test/fakes/fake-sandbox.js';
import { executeJob as job, fakeSessions, hostWithFakes } from '../session-host.spec-helper.js';
import { ExecutionRunner } from './execution-runner.js';

describe(ExecutionRunner.name, () => {
  it('should return the stored execution for a redelivered job without running it again', async () => {
    const { runner: sut, runtime } = hostWithFakes();
    const first = await sut.execute(job('exe_1'));
    const again = await sut.execute(job('exe_1'));
    expect(again.id).toBe(first.id);
    expect(runtime.created[0]!.runs).toHaveLength(1);
  });

  it("should run an execution's only dispatch without claiming it", async () => {
    const { runner: sut, runtime, guard } = hostWithFakes();
    const view = await sut.execute({ ...job('exe_1'), onlyDispatch: true });
    expect(view.status).toBe('ok');
    expect(runtime.created[0]!.runs).toHaveLength(1);
    expect([guard.claimed.size, guard.holds.length]).toEqual([0, 0]);
  });

  it('should not run the code when the run-once claim cannot be made', async () => {
    const { runner: sut, runtime, guard, executions } = hostWithFakes();
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

  it('should record a run that happened once the database is back, and not give up on it', async () => {
    const { runner: sut, runtime, executions } = hostWithFakes();
    const complete = executions.complete;
    let refusals = 0;
    executions.complete = async (...args: Parameters<typeof complete>) => {
      if (refusals++ < 2) throw new ServiceUnavailableError('database');
      return complete(...args);
    };
    const view = await sut.execute(job('exe_1'));
    expect([view.status, refusals]).toEqual(['ok', 3]);
    expect(executions.records.get('exe_1')?.status).toBe('ok');
    expect(runtime.created[0]!.runs).toHaveLength(1);
  });

  it('should not retry a failure that is not an outage', async () => {
    const { runner: sut, executions } = hostWithFakes();
    let calls = 0;
    executions.complete = async () => {
      calls++;
      throw new Error('value too long for type');
    };
    await expect(sut.execute(job('exe_1'))).rejects.toThrow('value too long');
    expect(calls).toBe(1);
  });

  it('should re-create a dead sandbox and tell the next run that state was lost', async () => {
    const { runner: sut, runtime } = hostWithFakes();
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

  describe('interrupts', () => {
    it('should pass an interrupt to the sandbox running the execution, and to no other run', async () => {
      const { runner: sut, runtime } = hostWithFakes();
      let answer!: () => void;
      const running = new Promise<void>((started) => {
        runtime.behaviour = (sandbox) =>
          new Promise((resolve) => {
            answer = () => resolve(ok({ status: sandbox.interrupts.length > 0 ? 'error' : 'ok' }));
            started();
          });
      });
      const view = sut.execute(job('exe_1'));
      await running;
      expect(sut.interrupt('exe_other')).toBe(false);
      expect(sut.interrupt('exe_1')).toBe(true);
      answer();
      expect((await view).status).toBe('error');
      expect(runtime.created[0]!.interrupts).toEqual(['exe_1']);
    });

    it('should not run the code of an execution interrupted before its job came', async () => {
      const { runner: sut, runtime, executions } = hostWithFakes();
      expect(sut.interrupt('exe_1')).toBe(false);
      const view = await sut.execute(job('exe_1'));
      expect(view.status).toBe('error');
      expect(view.error).toMatchObject({ name: 'KeyboardInterrupt', value: expect.stringContaining('before its code ran') });
      expect(runtime.created[0]?.runs ?? []).toHaveLength(0);
      expect(executions.records.get('exe_1')?.status).toBe('error');
      // Once only: the session runs what comes next.
      expect((await sut.execute(job('exe_2'))).status).toBe('ok');
    });
  });

  it('should report lost state when the session had a container before this worker hosted it', async () => {
    const { runner: sut } = hostWithFakes({ sessions: fakeSessions([{ containerId: 'old-container' }]) });
    expect((await sut.execute(job('exe_1'))).stateLost).toBe(true);
    expect((await sut.execute(job('exe_2'))).stateLost).toBe(false);
  });

  it('should run the executions of one session one at a time', async () => {
    const { runner: sut, runtime } = hostWithFakes();
    runtime.behaviour = () => new Promise((resolve) => setTimeout(() => resolve(ok()), 20));
    await Promise.all([sut.execute(job('a')), sut.execute(job('b')), sut.execute(job('c'))]);
    expect(runtime.created).toHaveLength(1);
    expect(runtime.created[0]!.maxConcurrent).toBe(1);
  });

  it('should report a sandbox that cannot start as a killed run instead of failing the job', async () => {
    const { runner: sut, runtime } = hostWithFakes();
    runtime.create = async () => {
      throw new Error('image missing');
    };
    const result = await sut.execute(job('exe_1'));
    expect(result.status).toBe('killed');
    expect(result.error).toMatchObject({ name: 'SandboxUnavailable' });
  });

  it('should refuse with SESSION_NOT_FOUND or SESSION_ENDED, without claiming, a session this worker cannot host', async () => {
    const { runner: sut, guard } = hostWithFakes({ sessions: fakeSessions([{ id: 'ses_1', status: 'ended' }]) });
    await expect(sut.execute(job('exe_1'))).rejects.toMatchObject({ code: 'SESSION_ENDED', status: 409 });
    await expect(sut.execute(job('exe_2', { sessionId: 'ses_unknown' }))).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND', status: 404 });
    expect(guard.claimed.size).toBe(0);
  });

  it('should answer SESSION_ENDED to a run that waited its turn while the session was stopped', async () => {
    const { runner: sut, runtime, lifecycle, guard } = hostWithFakes();
    let release!: () => void;
    runtime.behaviour = () => new Promise((resolve) => (release = () => resolve(ok())));
    const first = sut.execute(job('exe_1'));
    await new Promise((resolve) => setTimeout(resolve, 10));
    const second = sut.execute(job('exe_2'));
    await lifecycle.stop('ses_1');
    release();
    await first;
    const error = await second.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DrydockError);
    expect(error).toMatchObject({ code: 'SESSION_ENDED' });
    expect(guard.claimed.has('exe_2')).toBe(false);
  });

  it('should record a claimed run as SessionEnded and answer SESSION_ENDED when the session stops while its container starts', async () => {
    const { runner: sut, runtime, lifecycle, executions } = hostWithFakes();
    const create = runtime.create.bind(runtime);
    runtime.create = async () => {
      await lifecycle.stop('ses_1');
      return create();
    };
    await expect(sut.execute(job('exe_1'))).rejects.toMatchObject({ code: 'SESSION_ENDED' });
    expect(executions.records.get('exe_1')).toMatchObject({ status: 'killed', error: { name: 'SessionEnded' } });
    // The container that came up too late is not left running.
    expect(runtime.created[0]!.alive).toBe(false);
  });

  describe('start deadline', () => {
    const HOUR = 3600_000;
    const late = (id: string) => ({ ...job(id), recordedAt: Date.now() - HOUR - 1_000 });

    it('should not run a job that comes after its execution start deadline, and record the execution killed', async () => {
      const { runner: sut, runtime, executions } = hostWithFakes();
      const view = await sut.execute(late('exe_1'));
      expect(view.status).toBe('killed');
      expect(view.error).toMatchObject({ name: 'ExecutionExpired' });
      expect(view.error?.value).toContain('60 minutes');
      expect(executions.records.get('exe_1')).toMatchObject({ status: 'killed', error: { name: 'ExecutionExpired' } });
      expect(runtime.created.flatMap((sandbox) => sandbox.runs)).toHaveLength(0);
    });

    it('should answer a late job of a finished execution with its record, unchanged', async () => {
      const { runner: sut, runtime } = hostWithFakes();
      const first = await sut.execute({ ...job('exe_1'), recordedAt: Date.now() });
      const again = await sut.execute(late('exe_1'));
      expect([again.status, again.error]).toEqual([first.status, first.error]);
      expect(runtime.created[0]!.runs).toHaveLength(1);
    });

    it('should leave an execution whose run still holds the claim to that run', async () => {
      const { runner: sut, guard, executions } = hostWithFakes();
      guard.claimed.add('exe_1');
      const running = await executions.complete('ten_1', 'exe_1', failedRun({ status: 'killed', name: 'x', value: 'x' }));
      executions.records.set('exe_1', { ...running, status: 'running', error: null });
      expect((await sut.execute(late('exe_1'))).status).toBe('running');
    });

    it('should hold the claim until the deadline has passed and the run is over', async () => {
      const { runner: sut, guard } = hostWithFakes({ env: { EXECUTION_START_DEADLINE_MS: String(10 * 60_000) } });
      await sut.execute({ ...job('exe_1'), timeoutMs: 30_000, recordedAt: Date.now() - 4 * 60_000 });
      // 6 minutes left of the deadline, the run's 30 s timeout, 15 minutes' margin.
      expect(guard.holds[0]).toBeGreaterThan((6 * 60 + 30 + 15 * 60 - 5) * 1000);
      expect(guard.holds[0]).toBeLessThanOrEqual((6 * 60 + 30 + 15 * 60) * 1000);
      expect((await sut.execute({ ...job('exe_2'), recordedAt: Date.now() - 11 * 60_000 })).status).toBe('killed');
    });
  });

  it('should mark the session active for the next activity flush', async () => {
    const { runner: sut, activity, sessions } = hostWithFakes();
    await sut.execute(job('exe_1'));
    await activity.flush();
    expect(sessions.touched).toEqual([['ses_1']]);
  });

  describe('thread files', () => {
    const scope = { tenantId: 'ten_1', threadId: 'thr_1' };

    it('should put the thread files in the sandbox before the code runs', async () => {
      const { runner: sut, runtime, files } = hostWithFakes();
      await files.vfs.write(scope, '/data/in.csv', 'a\n1\n');
      let seen: string | undefined;
      runtime.behaviour = async (sandbox) => {
        seen = sandbox.session.get('/data/in.csv')?.toString();
        return ok();
      };
      await sut.execute(job('exe_1'));
      expect(seen).toBe('a\n1\n');
    });

    it('should record the files the code wrote in the thread and in the execution', async () => {
      const { runner: sut, runtime, files } = hostWithFakes();
      runtime.behaviour = async (sandbox) => {
        sandbox.session.set('/out/summary.csv', Buffer.from('n\n1\n'));
        return ok({ files: { changed: ['/out/summary.csv'], deleted: [], skipped: [] } });
      };
      const view = await sut.execute(job('exe_1'));
      expect(view.files).toEqual({ changed: ['/out/summary.csv'], deleted: [], skipped: [] });
      expect((await files.vfs.readContent(scope, '/out/summary.csv')).content.toString()).toBe('n\n1\n');
    });

    it('should not run the code when the files cannot be put in the sandbox', async () => {
      const { runner: sut, runtime, files, lifecycle } = hostWithFakes();
      await files.vfs.write(scope, '/a.txt', 'x');
      await lifecycle.start(job('x').session);
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
      const { runner: sut, runtime, files } = hostWithFakes();
      await files.vfs.write(scope, '/a.txt', 'x');
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
