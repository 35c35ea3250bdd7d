// The texts of large files this process read last, so that reading one page after
// another of a big file moves its text out of PostgreSQL once, not per page. An entry
// is only ever used after the store confirmed, in the same statement that would have
// returned the text, that the file at that path still has that sha256: a cached text
// is never stale. Keyed by tenant, thread and path, so what one tenant read is never
// served to another, and a hit tells nothing about other tenants' files.
export class RecentTexts {
  private readonly entries = new Map<string, { sha256: string; text: string; bytes: number }>();
  private bytes = 0;

  constructor(
    // Texts smaller than this are cheap to read again and are not kept.
    private readonly minBytes: number,
    // What all kept texts may add up to (their size in UTF-8); the least recently used go first.
    private readonly maxBytes: number,
  ) {}

  // The sha256 of the text kept for this path, for the store to compare.
  sha256Of(tenantId: string, threadId: string, path: string): string | null {
    return this.entries.get(key(tenantId, threadId, path))?.sha256 ?? null;
  }

  // The text kept for this path if it has this sha256 (and marks it recently used).
  take(tenantId: string, threadId: string, path: string, sha256: string): string | null {
    const k = key(tenantId, threadId, path);
    const entry = this.entries.get(k);
    if (!entry || entry.sha256 !== sha256) return null;
    this.entries.delete(k);
    this.entries.set(k, entry);
    return entry.text;
  }

  keep(tenantId: string, threadId: string, path: string, sha256: string, text: string, bytes: number): void {
    const k = key(tenantId, threadId, path);
    this.forget(k);
    if (bytes < this.minBytes || bytes > this.maxBytes) return;
    this.entries.set(k, { sha256, text, bytes });
    this.bytes += bytes;
    for (const [oldest] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.forget(oldest);
    }
  }

  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }

  private forget(k: string): void {
    const entry = this.entries.get(k);
    if (!entry) return;
    this.entries.delete(k);
    this.bytes -= entry.bytes;
  }
}

const key = (tenantId: string, threadId: string, path: string) => `${tenantId}\u0000${threadId}\u0000${path}`;
