import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { RunnableConfig } from '@langchain/core/runnables';
import { DrydockError } from '@drydock/core';
import { CheckpointCarrier, CONFIG_LATEST_CHECKPOINT, ThreadNotHeldError, withCheckpointCarrier, type AgentRuntime } from '@drydock/agents';
import { AgentRuntimeAccess } from './agent-runtime.access.js';
import { AGENT_THREADS_REPOSITORY, type AgentThreadRecord, type AgentThreadsRepository } from './agent-threads.repository.js';
import type { RunCreateDto } from './dto/run-create.dto.js';
import { LangGraphError } from './langgraph.errors.js';
import { THREAD_HEARTBEAT_MS, THREAD_STALE_MS } from './langgraph-threads.service.js';
import { RunEventTranslator, type RunEvent } from './run-events.js';
import { RunStop } from './run-stop.js';
import { buildRunConfig, planRun, type RunPlan } from './run-request.js';

// A run that holds its thread and has not started yet. The caller must call execute()
// at once: it is what releases the thread.
export interface PreparedRun {
  readonly runId: string;
  readonly threadId: string;
  // Runs the graph to the end, passing each SSE event (metadata first) to `emit`, and
  // resolves to the final state values. Aborting `signal` cancels the run.
  execute(signal: AbortSignal, emit?: (event: RunEvent) => void): Promise<unknown>;
}

@Injectable()
export class LangGraphRunsService {
  private readonly logger = new Logger('LangGraphRuns');

  constructor(
    @Inject(AGENT_THREADS_REPOSITORY) private readonly threads: AgentThreadsRepository,
    private readonly agent: AgentRuntimeAccess,
  ) {}

  // Checks the request, resolves the assistant and takes the thread (409 THREAD_BUSY
  // while another run holds it). Every refusal happens here, before any output.
  async prepare(tenantId: string, threadId: string, dto: RunCreateDto, kind: 'stream' | 'wait'): Promise<PreparedRun> {
    const plan = planRun(dto, ['values']);
    // runs/wait answers the final values only; it streams nothing.
    if (kind === 'wait') Object.assign(plan, { streamModes: [], graphModes: ['values'] });
    const runtime = this.agent.get();
    const runtimeConfig = await runtime.runConfig(tenantId, threadId, plan.assistantId);
    const runId = randomUUID();
    // The claim reads the thread, and its latest checkpoint, too: one statement on the
    // path of every run.
    const checkpointThread = runtimeConfig.configurable?.thread_id as string | undefined;
    let claim = await this.threads.claim(tenantId, threadId, runId, THREAD_STALE_MS, checkpointThread);
    if (claim === 'missing' && plan.ifNotExists === 'create') {
      await this.threads.create(tenantId, threadId, {});
      claim = await this.threads.claim(tenantId, threadId, runId, THREAD_STALE_MS, checkpointThread);
    }
    if (claim === 'missing') throw LangGraphError.threadNotFound(threadId);
    if (claim === 'busy') throw LangGraphError.threadBusy(threadId);
    const record = claim;
    // The run's first load takes the latest checkpoint from the claim (see ClaimedThread).
    if (record.latestCheckpoint) runtimeConfig.configurable = { ...runtimeConfig.configurable, [CONFIG_LATEST_CHECKPOINT]: record.latestCheckpoint };
    // Every run ends with its release, which waits for the WAL flush before the run
    // answers, and carries the run's last checkpoint write (execute()).
    // Its checkpoint writes land only while it holds the thread.
    const carrier = new CheckpointCarrier(runtimeConfig.durability === 'exit', this.threads.heldBy(tenantId, threadId, runId));
    const carried = withCheckpointCarrier(runtimeConfig, carrier);
    try {
      await this.tagThread(tenantId, record, plan.assistantId, runtime);
    } catch (error) {
      await this.threads.release(tenantId, threadId, runId, null);
      throw error;
    }
    return {
      runId,
      threadId,
      execute: (signal, emit = () => {}) => this.execute({ tenantId, threadId, runId, plan, runtime, runtimeConfig: carried, carrier }, signal, emit),
    };
  }

  private async execute(
    run: { tenantId: string; threadId: string; runId: string; plan: RunPlan; runtime: AgentRuntime; runtimeConfig: RunnableConfig; carrier: CheckpointCarrier },
    signal: AbortSignal,
    emit: (event: RunEvent) => void,
  ): Promise<unknown> {
    const { tenantId, threadId, runId, plan, runtime } = run;
    const stop = new RunStop(signal, () => this.threads.heartbeat(tenantId, threadId, runId), THREAD_HEARTBEAT_MS, {
      lost: () => this.logger.warn(`run ${runId} lost thread ${threadId} (deleted, or taken over): stopping it`),
      failed: (error) => this.logger.warn(`heartbeat of ${threadId}: ${String(error)}`),
    });
    let failure: { code: string; message: string } | null = null;
    let ended = false;
    try {
      emit({ event: 'metadata', data: { run_id: runId, thread_id: threadId, attempt: 1 } });
      const translator = new RunEventTranslator(plan.streamModes, (id) => runtime.publicThreadId(id));
      const config = buildRunConfig(run.runtimeConfig, plan, stop.signal);
      const stream = await runtime.graph.stream(plan.input, { ...config, streamMode: plan.graphModes });
      for await (const [mode, chunk] of stream) {
        for (const event of translator.translate(mode, chunk)) emit(event);
      }
      ended = true;
      return translator.lastValues ?? {};
    } catch (error) {
      // Stopped because it lost its thread: its state is not kept (the release finds no row).
      if (stop.lostThread) throw LangGraphError.runLostThread();
      if (stop.cancelled) throw LangGraphError.runCancelled();
      const mapped = this.toRunError(error, threadId);
      // Refused input ran nothing: the thread stays as it was.
      if (mapped.code !== 'INVALID_INPUT') failure = { code: mapped.code, message: mapped.message };
      throw mapped;
    } finally {
      stop.end();
      let released = false;
      let releaseFailed = false;
      try {
        released = await this.threads.release(tenantId, threadId, runId, failure, run.carrier.take());
        if (!released && !stop.lostThread) this.logger.warn(`run ${runId} lost thread ${threadId} (deleted, or taken over): its last state was not kept`);
      } catch (error) {
        releaseFailed = true;
        this.logger.error(`releasing ${threadId}: ${String(error)}`);
      }
      // The release's commit is what makes the run's checkpoints durable (it writes the
      // last, and the others committed without waiting for their WAL flush), and it
      // writes nothing for a run that lost its thread: unconfirmed, the run cannot
      // answer as kept.
      if (ended && !released) throw releaseFailed ? LangGraphError.runNotConfirmed() : LangGraphError.runLostThread();
    }
  }

  // Clients filter threads by the assistant they talk to (Agent Chat UI does).
  private async tagThread(tenantId: string, record: AgentThreadRecord, assistantId: string, runtime: AgentRuntime) {
    if (record.metadata.assistant_id !== undefined && record.metadata.graph_id !== undefined) return;
    const assistant = await runtime.getAssistant(tenantId, assistantId);
    await this.threads.mergeMetadata(tenantId, record.threadId, {
      graph_id: record.metadata.graph_id ?? assistant.graphId,
      assistant_id: record.metadata.assistant_id ?? assistant.assistantId,
    });
  }

  private toRunError(error: unknown, threadId: string): DrydockError {
    if (error instanceof DrydockError) return error;
    const err = error instanceof Error ? error : new Error(String(error));
    const firstLine = (err.message.split('\n')[0] ?? '').slice(0, 500);
    if (err.name === 'GraphRecursionError') return LangGraphError.recursionLimit(firstLine);
    // A checkpoint write after the run lost its thread: not kept.
    if (err instanceof ThreadNotHeldError) return LangGraphError.runLostThread();
    // No input and nothing to resume (e.g. a first run without input).
    if (err.name === 'EmptyInputError' || err.name === 'StateGraphInputError') {
      return LangGraphError.invalidInput('send "input" (e.g. {"messages": [...]}); this thread has nothing to resume');
    }
    this.logger.warn(`run on thread ${threadId} failed: ${err.stack ?? err.message}`);
    // Database errors may quote SQL; everything else (model endpoint, tool node) says
    // what went wrong in words the caller can use.
    if (err.name === 'QueryFailedError' || 'driverError' in err) {
      return LangGraphError.runFailed('The run failed on our side; it has been logged.');
    }
    return LangGraphError.runFailed(`The run failed: ${err.name}: ${firstLine}`);
  }
}
