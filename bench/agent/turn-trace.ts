// Where an agent turn's time goes, inside a running gateway: a preload that marks the
// turn's steps (the thread's claim and release, the checkpoint load and write, each model
// call as LangChain invokes it and as it goes out, the tool call and the execution in
// it) and, on SIGUSR2, writes the p50 of each stretch between two marks over the last
// 200 turns to TURN_TRACE_OUT (default var/turn-trace.txt).
//
// A measuring tool for bench/agent, never loaded in production: it wraps methods of the
// gateway's classes in place. Turns must come one at a time (bench/agent's loop does).
//
//   npm run build
//   GATEWAY_NODE_FLAGS="--import ./dist/bench/agent/turn-trace.js" bash scripts/start.sh --detach   # with the AGENT_MODEL_* bench/agent prints
//   npm run bench:agent -- --url http://127.0.0.1:8080 --turns 200
//   kill -USR2 "$(cat var/run/gateway.pid)" && cat var/turn-trace.txt
import { writeFileSync } from 'node:fs';
import { StructuredTool } from '@langchain/core/tools';
import { CachedPostgresSaver, SessionSandboxBackend } from '@drydock/agents';
import { CachingChatOpenAICompletions } from '../../libs/agents/src/models/caching-completions.model.js';
import { DirectChatCompletions } from '../../libs/agents/src/models/direct-completions.js';
import { LangGraphRunsService } from '../../apps/gateway/src/langgraph/langgraph-runs.service.js';
import { TypeOrmAgentThreadsRepository } from '../../apps/gateway/src/langgraph/typeorm-agent-threads.repository.js';

type Mark = [name: string, at: number];
const KEPT_TURNS = 200;
const out = process.env.TURN_TRACE_OUT || 'var/turn-trace.txt';

let current: Mark[] | null = null;
const turns: Mark[][] = [];
const mark = (name: string) => current?.push([name, performance.now()]);

// Marks `name>` when the method is called and `name<` when its promise settles.
function wrap(target: object, method: string, name: string): void {
  const proto = target as Record<string, (...args: unknown[]) => unknown>;
  const original = proto[method]!;
  proto[method] = async function (this: unknown, ...args: unknown[]) {
    mark(`${name}>`);
    try {
      return await original.apply(this, args);
    } finally {
      mark(`${name}<`);
    }
  };
}

// The turn starts when the runs service takes it (after HTTP parsing and validation)
// and ends when its run has been released.
const runs = LangGraphRunsService.prototype as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
const prepare = runs.prepare!;
runs.prepare = function (this: unknown, ...args: unknown[]) {
  current = [['start', performance.now()]];
  return prepare.apply(this, args);
};
const execute = runs.execute!;
runs.execute = async function (this: unknown, ...args: unknown[]) {
  mark('execute>');
  try {
    return await execute.apply(this, args);
  } finally {
    mark('end');
    if (current) turns.push(current);
    if (turns.length > KEPT_TURNS) turns.shift();
    current = null;
  }
};
wrap(TypeOrmAgentThreadsRepository.prototype, 'claim', 'claim');
wrap(TypeOrmAgentThreadsRepository.prototype, 'release', 'release');
wrap(CachedPostgresSaver.prototype, 'getTuple', 'load');
wrap(CachedPostgresSaver.prototype, 'put', 'put');
wrap(CachingChatOpenAICompletions.prototype, 'invoke', 'invoke-model');
wrap(CachingChatOpenAICompletions.prototype, '_generate', 'generate');
wrap(DirectChatCompletions.prototype, 'create', 'http-model');
wrap(StructuredTool.prototype, 'invoke', 'invoke-tool');
wrap(SessionSandboxBackend.prototype, 'executePython', 'execution');

process.on('SIGUSR2', () => {
  const stretches = new Map<string, number[]>();
  const add = (key: string, ms: number) => (stretches.get(key) ?? stretches.set(key, []).get(key)!).push(ms);
  for (const turn of turns) {
    const seen = new Map<string, number>();
    for (let i = 1; i < turn.length; i++) {
      let key = `${turn[i - 1]![0]} -> ${turn[i]![0]}`;
      const nth = (seen.get(key) ?? 0) + 1;
      seen.set(key, nth);
      if (nth > 1) key += ` (#${nth})`;
      add(key, turn[i]![1] - turn[i - 1]![1]);
    }
    add('whole turn', turn.at(-1)![1] - turn[0]![1]);
  }
  const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const lines = [...stretches].map(([key, values]) => `${p50(values).toFixed(3).padStart(8)} ms  ${key}  (n=${values.length})`);
  writeFileSync(out, `p50 over the last ${turns.length} turns\n${lines.join('\n')}\n`);
});
