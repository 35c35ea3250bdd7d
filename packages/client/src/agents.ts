import { unwrap, type Transport } from './http.js';
import type { Agent, AgentBundle, CreateAgentOptions, UpdateAgentOptions } from './types.js';

// Agent definitions: the model, tools and Python tool modules of a LangGraph agent.
export class Agents {
  constructor(private readonly http: Transport) {}

  async create(definition: CreateAgentOptions): Promise<Agent> {
    return unwrap(this.http.api.POST('/v1/agents', { body: definition }));
  }

  async list(): Promise<Agent[]> {
    return (await unwrap(this.http.api.GET('/v1/agents', {}))).agents;
  }

  async get(id: string): Promise<Agent> {
    return unwrap(this.http.api.GET('/v1/agents/{id}', { params: { path: { id } } }));
  }

  async update(id: string, changes: UpdateAgentOptions): Promise<Agent> {
    return unwrap(this.http.api.PATCH('/v1/agents/{id}', { params: { path: { id } }, body: changes }));
  }

  async delete(id: string): Promise<void> {
    await unwrap(this.http.api.DELETE('/v1/agents/{id}', { params: { path: { id } } }));
  }

  // A portable bundle (hashed) to import into another tenant or deployment.
  async export(id: string): Promise<AgentBundle> {
    return unwrap(this.http.api.GET('/v1/agents/{id}/export', { params: { path: { id } } }));
  }

  async import(bundle: AgentBundle): Promise<Agent> {
    return unwrap(this.http.api.POST('/v1/agents/import', { body: bundle }));
  }
}
