import { HumanMessage } from '@langchain/core/messages';
import type { RunCreateDto } from './dto/run-create.dto.js';
import { LangGraphError } from './langgraph.errors.js';
import { buildRunConfig, MAX_RECURSION_LIMIT, planRun } from './run-request.js';

const dto = (fields: Partial<RunCreateDto> = {}): RunCreateDto => Object.assign({ assistant_id: 'agent' }, fields) as RunCreateDto;
const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return (error as LangGraphError).code;
  }
  return 'none';
};

describe(planRun.name, () => {
  it('should default to values and map client modes to the graph modes they need', () => {
    expect(planRun(dto(), ['values'])).toMatchObject({ streamModes: ['values'], graphModes: ['values'] });
    expect(planRun(dto({ stream_mode: 'messages' }), ['values']).graphModes.sort()).toEqual(['messages', 'values']);
    expect(planRun(dto({ stream_mode: ['messages-tuple', 'updates'] }), ['values']).graphModes.sort()).toEqual(['messages', 'updates']);
  });

  it('should refuse stream modes it cannot produce', () => {
    expect(code(() => planRun(dto({ stream_mode: ['values', 'debug'] }), ['values']))).toBe('INVALID_STREAM_MODE');
    expect(code(() => planRun(dto({ stream_mode: 'events' }), ['values']))).toBe('INVALID_STREAM_MODE');
  });

  it('should turn input messages into LangChain messages and refuse bad ones', () => {
    const sut = planRun(dto({ input: { messages: [{ role: 'user', content: 'hi' }], other: 1 } }), ['values']);

    expect(sut.input).toEqual({ messages: [expect.any(HumanMessage)], other: 1 });
    expect(code(() => planRun(dto({ input: { messages: [{ role: 'bot', content: 'x' }] } }), ['values']))).toBe('INVALID_INPUT');
  });

  it('should drop configurable and metadata keys a client may not set', () => {
    const sut = planRun(
      dto({
        config: {
          configurable: { thread_id: 'x', checkpoint_ns: 'n', drydock_tenant_id: 'ten_other', __pregel_send: 1, model_hint: 'fast' },
          metadata: { drydock_agent_id: 'a', source: 'ui' },
        },
        metadata: { run_label: 'l' },
      }),
      ['values'],
    );

    expect(sut.configurable).toEqual({ model_hint: 'fast' });
    expect(sut.metadata).toEqual({ source: 'ui', run_label: 'l' });
  });

  it('should take the checkpoint to start from out of checkpoint_id or checkpoint', () => {
    const id = '1f0a2b3c-4d5e-6f70-8192-a3b4c5d6e7f8';
    expect(planRun(dto({ checkpoint_id: id }), ['values']).checkpointId).toBe(id);
    expect(planRun(dto({ checkpoint: { checkpoint_id: id, thread_id: 'ignored' } }), ['values']).checkpointId).toBe(id);
    expect(code(() => planRun(dto({ checkpoint_id: '../x' }), ['values']))).toBe('INVALID_CHECKPOINT_ID');
  });

  it.each([
    [{ command: { resume: 1 } }],
    [{ interrupt_before: ['agent'] }],
    [{ interrupt_after: '*' }],
    [{ webhook: 'https://example.com/hook' }],
    [{ after_seconds: 5 }],
    [{ multitask_strategy: 'enqueue' }],
    [{ context: { user: 'u' } }],
  ])('should refuse an option it does not implement: %j', (fields) => {
    expect(code(() => planRun(dto(fields as Partial<RunCreateDto>), ['values']))).toBe('UNSUPPORTED_OPTION');
  });

  it('should accept the options the SDK sends by default', () => {
    expect(code(() => planRun(dto({ multitask_strategy: 'reject', interrupt_before: [], on_disconnect: 'cancel' }), ['values']))).toBe('none');
  });
});

describe(buildRunConfig.name, () => {
  const runtimeConfig = { configurable: { thread_id: 'ten_a:t', drydock_tenant_id: 'ten_a', model: 'm' }, tags: ['agent'], metadata: { drydock_agent_id: 'agent' } };

  it('should let the runtime\'s keys win over the client\'s and add the client\'s own', () => {
    const plan = planRun(dto({ config: { configurable: { model: 'client', extra: 1 }, tags: ['ui'] }, metadata: { m: 1 } }), ['values']);

    const sut = buildRunConfig(runtimeConfig, plan, new AbortController().signal);

    expect(sut.configurable).toEqual({ thread_id: 'ten_a:t', drydock_tenant_id: 'ten_a', model: 'm', extra: 1 });
    expect(sut.tags).toEqual(['agent', 'ui']);
    expect(sut.metadata).toEqual({ m: 1, drydock_agent_id: 'agent' });
  });

  it('should start from the requested checkpoint and carry the abort signal', () => {
    const controller = new AbortController();
    const plan = planRun(dto({ checkpoint_id: '1f0a2b3c-4d5e-6f70-8192-a3b4c5d6e7f8' }), ['values']);

    const sut = buildRunConfig(runtimeConfig, plan, controller.signal);
    controller.abort();

    expect(sut.configurable?.checkpoint_id).toBe('1f0a2b3c-4d5e-6f70-8192-a3b4c5d6e7f8');
    expect(sut.signal?.aborted).toBe(true);
  });

  it('should let a client lower the recursion limit but not raise it past the ceiling', () => {
    const plan = (limit: number) => planRun(dto({ config: { recursion_limit: limit } }), ['values']);
    const signal = new AbortController().signal;

    expect(buildRunConfig({ ...runtimeConfig, recursionLimit: 50 }, plan(10), signal).recursionLimit).toBe(10);
    expect(buildRunConfig({ ...runtimeConfig, recursionLimit: 50 }, plan(500), signal).recursionLimit).toBe(50);
    expect(buildRunConfig(runtimeConfig, plan(5000), signal).recursionLimit).toBe(MAX_RECURSION_LIMIT);
    expect(buildRunConfig(runtimeConfig, planRun(dto(), ['values']), signal).recursionLimit).toBeUndefined();
  });
});
