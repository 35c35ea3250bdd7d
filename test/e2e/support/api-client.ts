export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

// A small HTTP client for the gateway under test.
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly key: string | null,
  ) {}

  // The Authorization header this client sends, for clients other than fetch (a WebSocket).
  get authHeaders(): Record<string, string> {
    return this.key ? { authorization: `Bearer ${this.key}` } : {};
  }

  withKey(key: string | null): ApiClient {
    return new ApiClient(this.baseUrl, key);
  }

  async request<T = any>(
    method: string,
    path: string,
    options: { json?: unknown; body?: string | Buffer; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (this.key) headers.authorization = `Bearer ${this.key}`;
    let body: string | Buffer | undefined = options.body;
    if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.json);
    }
    const res = await fetch(this.baseUrl + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('application/json') && text) parsed = JSON.parse(text);
    return { status: res.status, body: parsed as T, headers: res.headers };
  }

  get<T = any>(path: string) {
    return this.request<T>('GET', path);
  }
  post<T = any>(path: string, json?: unknown) {
    return this.request<T>('POST', path, { json: json ?? {} });
  }
  delete<T = any>(path: string) {
    return this.request<T>('DELETE', path);
  }

  async createSession(body: Record<string, unknown> = {}) {
    const res = await this.post('/v1/sessions', body);
    if (res.status !== 201 && res.status !== 200) throw new Error(`session create failed: ${JSON.stringify(res.body)}`);
    return res.body as { id: string; threadId: string; limits: Record<string, number>; workerId: string };
  }

  async execute(sessionId: string, code: string, extra: Record<string, unknown> = {}) {
    return this.post(`/v1/sessions/${sessionId}/executions`, { code, ...extra });
  }
}
