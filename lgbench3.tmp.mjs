import { useLeanRunnableContext } from './dist/libs/agents/src/graph/runnable-context.js';
import { StateGraph, MessagesAnnotation, START, END, Command } from '@langchain/langgraph';
import { AIMessage, ToolMessage, HumanMessage } from '@langchain/core/messages';
if (process.argv[2] === 'lean') useLeanRunnableContext();
const g = new StateGraph(MessagesAnnotation)
  .addNode('model', (s) => {
    const last = s.messages.at(-1);
    if (last instanceof ToolMessage) return new Command({ update: { messages: [new AIMessage('done')] }, goto: END });
    return new Command({ update: { messages: [new AIMessage({ content: '', tool_calls: [{ id: 'c' + s.messages.length, name: 'execute_python', args: { code: 'print(1)' }, type: 'tool_call' }] })] }, goto: 'tools' });
  }, { ends: ['tools', END] })
  .addNode('tools', (s) => new Command({ update: { messages: [new ToolMessage({ content: '1', tool_call_id: 'c' })] } }))
  .addEdge(START, 'model').addEdge('tools', 'model');
const app = g.compile();
const run = async () => {
  const st = await app.stream({ messages: [new HumanMessage('hi')] }, { configurable: { thread_id: 't' }, streamMode: ['values'] });
  for await (const _ of st);
};
for (let i = 0; i < 1000; i++) await run();
const N = 3000; const t0 = performance.now();
for (let i = 0; i < N; i++) await run();
console.log(process.argv[2] ?? 'stock', 'ms per turn', ((performance.now() - t0) / N).toFixed(3));
