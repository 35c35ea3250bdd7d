import type { components, operations } from './generated/openapi.js';

// The platform's shapes, named for SDK users; all generated from the OpenAPI document.
type Schemas = components['schemas'];
export type SessionInfo = Schemas['SessionResponse'];
export type SessionLimits = Schemas['SessionLimitsDto'];
export type CreateSessionOptions = Schemas['CreateSessionDto'];
// What a session asks to reach (`sessions.create({network})`): `{allow: [...]}` within the
// tenant's ceiling, or false (the default) for no network.
export type NetworkOption = NonNullable<CreateSessionOptions['network']>;
// A session's policy as the platform stores it (normalized: lower case, no trailing dot).
export type NetworkPolicy = Schemas['NetworkPolicyResponse'];
// One connection attempt through the egress proxy, allowed or denied.
export type Connection = Schemas['ConnectionResponse'];
// One page of a session's network: its policy (null: no network) and connections, newest
// first; `next` is the cursor of the following page (null on the last).
export type SessionNetwork = Schemas['SessionNetworkResponse'];
// `verdict` ('allowed' | 'denied'), `limit` (the page's size, 1-1000, default 100) and
// `before` (the `next` of the page before).
export type SessionNetworkQuery = NonNullable<operations['SessionsController_network']['parameters']['query']>;
export type Execution = Schemas['ExecutionResponse'];
// A snapshot of a gvisor session, to fork new sessions from (docs/sessions.md).
export type Snapshot = Schemas['SnapshotResponse'];
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
// One page of batches (`batches.list()`): newest first; `next` is the `before` of the
// following page, null on the last.
export type BatchPage = Schemas['BatchListResponse'];
export type Tenant = Schemas['TenantResponse'];
export type TenantWithKey = Schemas['TenantWithKeyResponse'];
export type TenantLimits = Schemas['TenantLimitsDto'];
// A tenant's network ceiling (`limits.network`): the hosts its sessions may ask for, and
// private ranges they may reach besides public addresses.
export type NetworkCeiling = Schemas['NetworkCeilingDto'];
// A connection attempt as operators see it (GET /admin/egress): with its tenant and worker.
export type AdminConnection = Schemas['AdminConnectionResponse'];
export type AdminEgressPage = Schemas['AdminEgressResponse'];
// tenantId, sessionId, batchId, verdict, from and to (ISO 8601 dates or times), limit (1-1000,
// default 100) and before (the `next` of the page before).
export type AdminEgressQuery = NonNullable<operations['AdminEgressController_list']['parameters']['query']>;
// What `admin.tenants.delete(id)` removed.
export type TenantDeleted = Schemas['TenantDeletedResponse'];
export type DailyUsage = Schemas['DailyUsageResponse'];
export type StoredUsage = Schemas['StoredUsageResponse'];
// GET /admin/usage: per tenant and UTC day, and what each tenant stores now.
export type Usage = Schemas['UsageResponse'];
// tenantId, from and to (ISO 8601 dates or times; default the last 30 days, at most 366).
export type UsageQuery = NonNullable<operations['AdminUsageController_get']['parameters']['query']>;
// A live worker (GET /admin/workers): its load, state (active, draining, drained) and pool.
export type WorkerInfo = Schemas['WorkerResponse'];
export type DrainingWorker = Schemas['DrainingWorkerResponse'];
export type EgressUsage = Schemas['EgressUsageResponse'];
export type CreateTemplateOptions = Schemas['CreateTemplateDto'];
export type TemplateBuildInfo = Schemas['TemplateBuildResponse'];
export type TemplateSummary = Schemas['TemplateSummaryResponse'];
export type Template = Schemas['TemplateResponse'];
export type TemplateVersion = Schemas['TemplateVersionResponse'];
export type TemplateVersionStatus = TemplateVersion['status'];
