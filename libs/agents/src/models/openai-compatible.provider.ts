import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { AppConfig } from '@drydock/core';
import { CachingChatOpenAICompletions } from './caching-completions.model.js';
import { keepAliveFetch } from './keep-alive-fetch.js';
import { DEFAULT_MODEL_NAME, modelNotConfigured, type ChatModelProvider } from './chat-model-provider.js';

// Any endpoint speaking OpenAI's chat completions protocol (OpenAI itself, vLLM, Ollama,
// LiteLLM, llama.cpp's server...). The completions API rather than OpenAI's newer
// Responses API, because that is the protocol the compatible servers implement.
export class OpenAiCompatibleModelProvider implements ChatModelProvider {
  private readonly models = new Map<string, BaseChatModel>();
  // One set of keep-alive connections for every model this gateway calls.
  private readonly fetch = keepAliveFetch();

  constructor(private readonly config: AppConfig['agent']) {}

  get configured(): boolean {
    return Boolean(this.config.modelBaseUrl && this.config.model);
  }

  get(modelName: string): BaseChatModel {
    if (!this.configured) throw modelNotConfigured();
    const name = modelName === DEFAULT_MODEL_NAME ? this.config.model! : modelName;
    let model = this.models.get(name);
    if (!model) {
      model = new CachingChatOpenAICompletions({
        model: name,
        // Local servers often need no key; the client insists on one.
        apiKey: this.config.modelApiKey ?? 'not-needed',
        configuration: { baseURL: this.config.modelBaseUrl, fetch: this.fetch },
        timeout: this.config.modelTimeoutMs,
        maxRetries: 2,
        // Several OpenAI-compatible servers reject the stream_options field.
        streamUsage: false,
      });
      this.models.set(name, model);
    }
    return model;
  }
}
