import type { components } from './generated/openapi.js';

// The platform's shapes, named for SDK users; all generated from the OpenAPI document.
type Schemas = components['schemas'];
export type SessionInfo = Schemas['SessionResponse'];
export type SessionLimits = Schemas['SessionLimitsDto'];
export type CreateSessionOptions = Schemas['CreateSessionDto'];
export type Execution = Schemas['ExecutionResponse'];
// A command's record (session.commands.run): an execution of kind `command`, which always
// says how the process ended. `status` is "ok" iff it exited 0; `exitCode` is null when a
// signal or the platform (timeout, memory) ended it, `signal` then names it (e.g. SIGKILL).
export type CommandResult = Omit<Execution, 'kind' | 'exitCode' | 'signal'> & { kind: 'command'; exitCode: number | null; signal: string | null };
export type ProcessInfo = Schemas['ProcessResponse'];
export type FileEntry = Schemas['FileEntryResponse'];
export type FileInfo = Schemas['FileInfoResponse'];
export type GrepResult = Schemas['GrepResultResponse'];
export type GrepOptions = Omit<Schemas['GrepDto'], 'pattern'>;
export type EditResult = Schemas['EditResultResponse'];
export type ArchiveUpload = Schemas['ArchiveUploadResponse'];
export type Artifact = Schemas['ArtifactResponse'];
export type SignedUrl = Schemas['SignedUrlResponse'];
export type Agent = Schemas['AgentResponse'];
export type CreateAgentOptions = Schemas['CreateAgentDto'];
export type UpdateAgentOptions = Schemas['UpdateAgentDto'];
export type AgentBundle = Schemas['AgentBundleResponse'];
export type Batch = Schemas['BatchResponse'];
export type BatchCounts = Schemas['BatchCountsResponse'];
export type BatchItem = Schemas['BatchItemResponse'];
export type BatchItemInput = Schemas['BatchItemDto'];
export type BatchOptions = Omit<Schemas['SubmitBatchDto'], 'items'>;
export type Tenant = Schemas['TenantResponse'];
export type TenantWithKey = Schemas['TenantWithKeyResponse'];
export type TenantLimits = Schemas['TenantLimitsDto'];
export type CreateTemplateOptions = Schemas['CreateTemplateDto'];
export type TemplateBuildInfo = Schemas['TemplateBuildResponse'];
export type TemplateSummary = Schemas['TemplateSummaryResponse'];
export type Template = Schemas['TemplateResponse'];
export type TemplateVersion = Schemas['TemplateVersionResponse'];
export type TemplateVersionStatus = TemplateVersion['status'];
