import { Injectable } from '@nestjs/common';
import type { AssistantInfo } from '@drydock/agents';
import { AgentRuntimeAccess } from './agent-runtime.access.js';
import type { CountAssistantsDto, SearchAssistantsDto } from './dto/assistants.dto.js';
import { type AssistantView, toAssistantView } from './langgraph.views.js';

const DEFAULT_LIMIT = 10;

// Assistants are the tenant's agents as the runtime lists them (the built-in `agent` and
// one per agent definition); this API only reads them.
@Injectable()
export class LangGraphAssistantsService {
  constructor(private readonly agent: AgentRuntimeAccess) {}

  async get(tenantId: string, assistantId: string): Promise<AssistantView> {
    return toAssistantView(await this.agent.get().getAssistant(tenantId, assistantId));
  }

  // The page asked for, and the offset of the next page (null on the last one).
  async search(tenantId: string, query: SearchAssistantsDto): Promise<{ assistants: AssistantView[]; next: number | null }> {
    const matching = await this.matching(tenantId, query);
    const key = query.sort_by ?? 'created_at';
    const direction = (query.sort_order ?? (query.sort_by ? 'asc' : 'desc')) === 'asc' ? 1 : -1;
    const field = (info: AssistantInfo) =>
      ({ assistant_id: info.assistantId, graph_id: info.graphId, name: info.name, created_at: info.createdAt, updated_at: info.updatedAt })[key];
    matching.sort((a, b) => direction * field(a).localeCompare(field(b)) || a.assistantId.localeCompare(b.assistantId));
    const offset = query.offset ?? 0;
    const limit = query.limit ?? DEFAULT_LIMIT;
    const page = matching.slice(offset, offset + limit).map(toAssistantView);
    return { assistants: page, next: offset + limit < matching.length ? offset + limit : null };
  }

  async count(tenantId: string, query: CountAssistantsDto): Promise<number> {
    return (await this.matching(tenantId, query)).length;
  }

  private async matching(tenantId: string, query: CountAssistantsDto): Promise<AssistantInfo[]> {
    const all = await this.agent.get().listAssistants(tenantId);
    const name = query.name?.toLowerCase();
    return all.filter(
      (info) =>
        (!query.graph_id || info.graphId === query.graph_id) &&
        (!name || info.name.toLowerCase().includes(name)) &&
        metadataMatches(info.metadata, query.metadata),
    );
  }
}

function metadataMatches(metadata: Record<string, unknown>, wanted: Record<string, unknown> | undefined): boolean {
  if (!wanted) return true;
  return Object.entries(wanted).every(([key, value]) => JSON.stringify(metadata[key]) === JSON.stringify(value));
}
