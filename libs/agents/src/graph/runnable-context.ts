import { AsyncLocalStorageProviderSingleton } from '@langchain/core/singletons';

// Where LangChain keeps a runnable's config and context variables in its async-local
// store (@langchain/core's singletons/async_local_storage; both keys are Symbol.for).
const LC_CHILD_KEY = Symbol.for('lc:child_config');
const CONTEXT_VARIABLES_KEY = Symbol.for('lc:context_variables');
const TRACER_NAME = 'langchain_tracer';
const TRACING_VARIABLES = ['LANGSMITH_TRACING_V2', 'LANGCHAIN_TRACING_V2', 'LANGSMITH_TRACING', 'LANGCHAIN_TRACING'];

type RunWithConfig = typeof AsyncLocalStorageProviderSingleton.runWithConfig;
type Store = Record<PropertyKey, unknown>;

let installed = false;

// LangChain runs every runnable (each graph node, edge, channel writer and tool call)
// inside `runWithConfig`, which builds a callback manager and a LangSmith
// RunTree (a v7 uuid, a dotted order, environment lookups) only to carry the config in
// its async-local store, even with tracing off. Without a tracer the store needs the
// config and the inherited context variables and nothing else, so this carries exactly
// those in a plain object; about 1 ms of gateway CPU per turn (bench/README.md, agent).
// With LangSmith tracing switched on in the environment it installs nothing, and a run
// that brings its own tracer in its callbacks takes LangChain's own path.
export function useLeanRunnableContext(env: NodeJS.ProcessEnv = process.env): boolean {
  if (TRACING_VARIABLES.some((name) => env[name] === 'true')) return false;
  if (installed) return true;
  const provider = AsyncLocalStorageProviderSingleton;
  const original = provider.runWithConfig.bind(provider);
  installed = true;
  // An own property in front of the class's method; restoreRunnableContext deletes it.
  provider.runWithConfig = ((config, callback, avoidCreatingRootRunTree) => {
    if (carriesTracer(config?.callbacks)) return original(config, callback, avoidCreatingRootRunTree);
    const storage = provider.getInstance();
    const previous = storage.getStore() as Store | undefined;
    let store: Store | undefined = avoidCreatingRootRunTree ? undefined : { extra: { [LC_CHILD_KEY]: config } };
    const inherited = previous?.[CONTEXT_VARIABLES_KEY];
    if (inherited !== undefined) (store ??= {})[CONTEXT_VARIABLES_KEY] = inherited;
    return storage.run(store, callback);
  }) as RunWithConfig;
  return true;
}

// Puts LangChain's own `runWithConfig` back (for tests).
export function restoreRunnableContext(): void {
  if (!installed) return;
  delete (AsyncLocalStorageProviderSingleton as { runWithConfig?: RunWithConfig }).runWithConfig;
  installed = false;
}

function carriesTracer(callbacks: unknown): boolean {
  if (!callbacks) return false;
  const handlers = Array.isArray(callbacks) ? callbacks : (callbacks as { handlers?: unknown[] }).handlers;
  return Array.isArray(handlers) && handlers.some((handler) => (handler as { name?: string } | undefined)?.name === TRACER_NAME);
}
