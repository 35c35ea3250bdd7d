export * from './chat-model-provider.js';
export * from './openai-compatible.provider.js';
export * from './scripted-chat-model.js';
