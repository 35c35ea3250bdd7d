import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { DrydockError } from '@drydock/core';

// Where the agent's chat models come from. One provider serves the deployment; an agent
// definition names a model ("default" = the deployment's configured model). Other
// providers (Anthropic, Bedrock, a local runtime) implement this interface and are
// bound to CHAT_MODEL_PROVIDER instead.
export const CHAT_MODEL_PROVIDER = Symbol('CHAT_MODEL_PROVIDER');

export const DEFAULT_MODEL_NAME = 'default';

export interface ChatModelProvider {
  // False when nothing is configured: agent runs are refused, everything else works.
  readonly configured: boolean;
  // A chat model for a model name ("default" or a name the endpoint knows). Throws
  // MODEL_NOT_CONFIGURED when the provider cannot serve it.
  get(modelName: string): BaseChatModel;
}

export function modelNotConfigured(detail?: string): DrydockError {
  return new DrydockError(
    'MODEL_NOT_CONFIGURED',
    detail ??
      'No chat model is configured on this deployment; the operator sets AGENT_MODEL_BASE_URL, AGENT_MODEL_API_KEY and AGENT_MODEL.',
    503,
  );
}
