import type { ApiClient } from './api-client.js';
import { pollUntil } from './until.js';

// The ids of a tenant's executions in `status`, newest first (GET /admin/executions).
export async function executionIds(admin: ApiClient, tenantId: string, status: 'queued' | 'running'): Promise<string[]> {
  const res = await admin.get(`/admin/executions?tenantId=${tenantId}&status=${status}`);
  return (res.body.executions ?? []).map((e: { id: string }) => e.id);
}

// The tenant's execution whose code is running (the worker marks it after 50 ms).
export async function runningExecution(admin: ApiClient, tenantId: string, timeoutMs = 20_000): Promise<string> {
  let ids: string[] = [];
  await pollUntil(async () => (ids = await executionIds(admin, tenantId, 'running')).length > 0, timeoutMs, 100, 'an execution running');
  return ids[0]!;
}

// The execution's record once it is no longer queued or running.
export async function endedExecution(api: ApiClient, id: string, timeoutMs = 20_000): Promise<any> {
  let record: { status: string } | undefined;
  await pollUntil(
    async () => {
      record = (await api.get(`/v1/executions/${id}`)).body;
      return record!.status !== 'running' && record!.status !== 'queued';
    },
    timeoutMs,
    100,
    `execution ${id} ended`,
  );
  return record;
}
