import { ApiProperty } from '@nestjs/swagger';
import type { AssistantView, ThreadView } from '../langgraph.views.js';
import type { WireCheckpoint, WireThreadState, WireThreadTask } from '../thread-state.mapper.js';

// The response shapes of the LangGraph-compatible API (snake_case, as
// @langchain/langgraph-sdk reads them), for the OpenAPI document. Each implements the view
// the controller returns, so the compiler keeps them in step. State values, metadata and
// messages are the graph's own and stay free-form here.

const FREE_FORM = { type: 'object', additionalProperties: true } as const;

export class AssistantResponse implements AssistantView {
  @ApiProperty({ example: 'agent', description: '"agent" (the built-in agent) or the id of one of the tenant\'s agent definitions.' })
  assistant_id: string;

  @ApiProperty({ example: 'agent', description: 'Always "agent": every assistant runs the same graph.' })
  graph_id: string;

  @ApiProperty() name: string;

  @ApiProperty({ type: 'string', nullable: true, description: "The start of the agent definition's instructions." })
  description: string | null;

  @ApiProperty({ ...FREE_FORM, description: 'Always {}.' })
  config: Record<string, unknown>;

  @ApiProperty({ ...FREE_FORM, description: 'Always {}.' })
  context: Record<string, unknown>;

  @ApiProperty({ ...FREE_FORM, description: 'For an agent definition: {model, tools}.' })
  metadata: Record<string, unknown>;

  @ApiProperty({ type: 'integer', example: 1, description: 'Always 1: assistants are not versioned here.' })
  version: number;

  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class ThreadErrorResponse {
  @ApiProperty({ example: 'RUN_FAILED' }) code: string;
  @ApiProperty() message: string;
}

export class ThreadResponse implements ThreadView {
  @ApiProperty({ format: 'uuid' }) thread_id: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiProperty({ format: 'date-time' }) state_updated_at: string;

  @ApiProperty({ ...FREE_FORM, description: "The client's metadata; a thread's first run adds graph_id and assistant_id." })
  metadata: Record<string, unknown>;

  @ApiProperty({ enum: ['idle', 'busy', 'error'], description: 'busy while a run holds the thread; error after a failed run, until the next one.' })
  status: ThreadView['status'];

  @ApiProperty({
    ...FREE_FORM,
    nullable: true,
    description: "The thread's current state values (e.g. {messages: [...]}); null for a new thread or when the agent is unavailable.",
  })
  values: unknown;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'array', items: {} }, description: 'Always {}.' })
  interrupts: Record<string, unknown[]>;

  @ApiProperty({ ...FREE_FORM, description: 'Always {}.' })
  config: Record<string, unknown>;

  @ApiProperty({ ...FREE_FORM, description: 'Always {}.' })
  context: Record<string, unknown>;

  @ApiProperty({ type: () => ThreadErrorResponse, nullable: true, description: "The last run's failure while status is error." })
  error: ThreadErrorResponse | null;
}

export class CheckpointResponse implements WireCheckpoint {
  @ApiProperty({ format: 'uuid', description: 'The public thread id.' }) thread_id: string;
  @ApiProperty({ example: '' }) checkpoint_ns: string;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true }) checkpoint_id: string | null;
  @ApiProperty({ ...FREE_FORM, nullable: true }) checkpoint_map: Record<string, unknown> | null;
}

export class ThreadTaskResponse implements WireThreadTask {
  @ApiProperty() id: string;
  @ApiProperty({ description: 'The node the task runs.' }) name: string;
  @ApiProperty({ type: 'string', nullable: true }) error: string | null;
  @ApiProperty({ type: 'array', items: FREE_FORM }) interrupts: unknown[];
  @ApiProperty({ type: () => CheckpointResponse, nullable: true }) checkpoint: CheckpointResponse | null;
  // A subgraph's state (recursive).
  @ApiProperty({ type: () => ThreadStateResponse, nullable: true }) state: ThreadStateResponse | null;
  @ApiProperty({ ...FREE_FORM, nullable: true, description: "What the node returned (a state update); null while pending." })
  result: unknown;
}

export class ThreadStateResponse implements WireThreadState {
  @ApiProperty({ ...FREE_FORM, description: 'The state values at this checkpoint, e.g. {messages: [...]}.' })
  values: unknown;

  @ApiProperty({ type: [String], description: 'The nodes to run next; empty when the graph has finished.' })
  next: string[];

  @ApiProperty({ type: () => [ThreadTaskResponse] })
  tasks: ThreadTaskResponse[];

  @ApiProperty({ type: () => CheckpointResponse, nullable: true })
  checkpoint: CheckpointResponse | null;

  @ApiProperty({ ...FREE_FORM, nullable: true, description: 'Checkpoint metadata (source, step, writes, ...).' })
  metadata: Record<string, unknown> | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  created_at: string | null;

  @ApiProperty({ type: () => CheckpointResponse, nullable: true })
  parent_checkpoint: CheckpointResponse | null;
}

export class UpdateThreadStateResponse {
  @ApiProperty({ type: () => CheckpointResponse, nullable: true, description: 'The checkpoint the update created.' })
  checkpoint: CheckpointResponse | null;
}
