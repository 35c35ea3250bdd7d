import { Allow, IsBoolean, IsInt, IsObject, IsOptional, IsString, Length, Max, Min } from 'class-validator';

// POST /threads/:id/state: a state update, as if `as_node` had returned `values`.
export class UpdateThreadStateDto {
  // An object of state keys (messages in LangChain dict form); checked in the service.
  @Allow()
  values?: unknown;

  @IsOptional() @IsString() @Length(1, 128)
  as_node?: string;

  @IsOptional() @IsString() @Length(1, 128)
  checkpoint_id?: string;

  @IsOptional() @IsObject()
  checkpoint?: Record<string, unknown>;
}

// POST /threads/:id/state/checkpoint
export class StateAtCheckpointDto {
  @IsObject()
  checkpoint: Record<string, unknown>;

  @IsOptional() @IsBoolean()
  subgraphs?: boolean;
}

// POST /threads/:id/history
export class ThreadHistoryDto {
  @IsOptional() @IsInt() @Min(1) @Max(1000)
  limit?: number;

  // A checkpoint id, or a config {configurable: {checkpoint_id}}: states before it.
  @Allow()
  before?: unknown;

  @IsOptional() @IsObject()
  metadata?: Record<string, unknown>;

  // Where to start: {checkpoint_id}.
  @IsOptional() @IsObject()
  checkpoint?: Record<string, unknown>;
}
