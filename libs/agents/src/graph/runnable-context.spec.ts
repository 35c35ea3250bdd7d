import { getContextVariable, setContextVariable } from '@langchain/core/context';
import { RunnableLambda } from '@langchain/core/runnables';
import { AsyncLocalStorageProviderSingleton } from '@langchain/core/singletons';
import { LangChainTracer } from '@langchain/core/tracers/tracer_langchain';
import { getConfig } from '@langchain/langgraph';
import { isRunTree } from 'langsmith/run_trees';
import { restoreRunnableContext, useLeanRunnableContext } from './runnable-context.js';

// What a runnable sees of its context: its config (as LangGraph's getConfig reads it),
// a context variable set by its caller, and whether the store is a LangSmith RunTree.
const probe = RunnableLambda.from(async () => ({
  configured: getConfig()?.configurable?.thread_id as string | undefined,
  variable: getContextVariable<string>('tenant'),
  runTree: isRunTree(AsyncLocalStorageProviderSingleton.getInstance().getStore()),
}));
const outer = RunnableLambda.from(async (_: unknown, config) => probe.invoke({}, config));

describe('lean runnable context', () => {
  afterEach(() => restoreRunnableContext());

  it('carries the config and inherited context variables without a RunTree', async () => {
    expect(useLeanRunnableContext({})).toBe(true);
    setContextVariable('tenant', 'ten_a');
    const seen = await outer.invoke({}, { configurable: { thread_id: 'ten_a:thr_1' } });
    expect(seen).toEqual({ configured: 'ten_a:thr_1', variable: 'ten_a', runTree: false });
  });

  it('sees the same as LangChain\'s own path, which builds a RunTree', async () => {
    setContextVariable('tenant', 'ten_b');
    const seen = await outer.invoke({}, { configurable: { thread_id: 'ten_b:thr_2' } });
    expect(seen).toEqual({ configured: 'ten_b:thr_2', variable: 'ten_b', runTree: true });
  });

  it('installs nothing while LangSmith tracing is on', async () => {
    expect(useLeanRunnableContext({ LANGSMITH_TRACING: 'true' })).toBe(false);
    const seen = await outer.invoke({}, { configurable: { thread_id: 't:1' } });
    expect(seen.runTree).toBe(true);
  });

  it('leaves a run that brings its own tracer to LangChain', async () => {
    useLeanRunnableContext({});
    // A tracer whose LangSmith client keeps what it is sent (nothing leaves the test).
    const posted: unknown[] = [];
    const client = { createRun: async (run: unknown) => void posted.push(run), updateRun: async () => undefined };
    const tracer = new LangChainTracer({ client: client as never });
    const seen = await outer.invoke({}, { configurable: { thread_id: 't:2' }, callbacks: [tracer] });
    expect(seen).toMatchObject({ configured: 't:2', runTree: true });
  });
});
