import { BaseChatModel, type BaseChatModelParams } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import type { BindToolsInput } from '@langchain/core/language_models/chat_models';
import type { Runnable } from '@langchain/core/runnables';
import type { ChatModelProvider } from './chat-model-provider.js';

// A chat model whose answers come from a script, for tests and benchmarks: never a live
// model. The script sees the conversation so far (and the tool names bound) and returns
// the next AI message, typically with tool calls.
export type ChatScript = (turn: ScriptedTurn) => AIMessage | Promise<AIMessage>;

export interface ScriptedTurn {
  messages: BaseMessage[];
  toolNames: string[];
  // How many times this model has been called so far (every thread), this one excluded.
  callIndex: number;
  // How many AI messages the conversation holds since its last human message: 0 on the
  // first model call of a run. Scripts use it so concurrent threads each get their turn.
  step: number;
}

function stepOf(messages: BaseMessage[]): number {
  let step = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const type = messages[i]!.getType();
    if (type === 'human') break;
    if (type === 'ai') step++;
  }
  return step;
}

export class ScriptedChatModel extends BaseChatModel {
  // Shared with models made by bindTools, so a test sees every call.
  readonly calls: ScriptedTurn[];
  private readonly toolNames: string[];

  constructor(
    private readonly script: ChatScript,
    options: { calls?: ScriptedTurn[]; toolNames?: string[] } & BaseChatModelParams = {},
  ) {
    super(options);
    this.calls = options.calls ?? [];
    this.toolNames = options.toolNames ?? [];
  }

  _llmType(): string {
    return 'drydock-scripted';
  }

  override bindTools(tools: BindToolsInput[]): Runnable<any, any> {
    const names = tools.map((t) => (t as { name?: string; function?: { name: string } }).name ?? (t as { function: { name: string } }).function?.name);
    return new ScriptedChatModel(this.script, { calls: this.calls, toolNames: names.filter(Boolean) as string[] });
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const turn: ScriptedTurn = { messages, toolNames: this.toolNames, callIndex: this.calls.length, step: stepOf(messages) };
    this.calls.push(turn);
    const message = await this.script(turn);
    const text = typeof message.content === 'string' ? message.content : '';
    return { generations: [{ message, text }] };
  }
}

// A script from a list of replies, one per step of a run (see ScriptedTurn.step); a
// function entry sees the turn.
export function scriptOf(replies: Array<AIMessage | ChatScript>): ChatScript {
  return (turn) => {
    const reply = replies[turn.step];
    if (reply === undefined) throw new Error(`the scripted model has no reply for step ${turn.step + 1}`);
    return typeof reply === 'function' ? reply(turn) : reply;
  };
}

// A provider that serves scripted models: one script per model name, or one for all.
export class ScriptedModelProvider implements ChatModelProvider {
  readonly configured = true;
  private readonly models = new Map<string, ScriptedChatModel>();

  constructor(private readonly scriptFor: (modelName: string) => ChatScript) {}

  get(modelName: string): ScriptedChatModel {
    let model = this.models.get(modelName);
    if (!model) {
      model = new ScriptedChatModel(this.scriptFor(modelName));
      this.models.set(modelName, model);
    }
    return model;
  }
}
