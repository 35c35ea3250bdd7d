import type { IncomingHttpHeaders } from 'node:http';

export function bearerToken(req: { headers: IncomingHttpHeaders }): string | null {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}
