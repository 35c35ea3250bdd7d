import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

// One row per path ever written in a thread. Live rows hold exactly one of
// `textContent` (UTF-8 files) and `bytes`; deleted rows are content-less tombstones that
// keep their path so the container sync can propagate the delete. Paths compare
// bytewise (COLLATE "C") so a directory's files are one index range.
@Entity({ name: 'thread_files' })
@Index('thread_files_revision_idx', ['tenantId', 'threadId', 'revision'])
export class ThreadFileEntity {
  @PrimaryColumn({ name: 'tenant_id', type: 'text' })
  tenantId: string;

  @PrimaryColumn({ name: 'thread_id', type: 'text' })
  threadId: string;

  @PrimaryColumn({ type: 'text', collation: 'C' })
  path: string;

  @Column({ name: 'text_content', type: 'text', nullable: true })
  textContent: string | null;

  @Column({ type: 'bytea', nullable: true })
  bytes: Buffer | null;

  @Column({ name: 'content_type', type: 'text' })
  contentType: string;

  // Bytes of the content (UTF-8 for text); 0 for tombstones.
  @Column({ type: 'bigint' })
  size: string;

  @Column({ type: 'char', length: 64 })
  sha256: string;

  // Per path, +1 on every change (deletes included).
  @Column({ type: 'integer' })
  version: number;

  // The thread revision at which the row last changed.
  @Column({ type: 'bigint' })
  revision: string;

  @Column({ type: 'boolean', default: false })
  deleted: boolean;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'modified_at', type: 'timestamptz' })
  modifiedAt: Date;
}

// Per thread, the counter every change moves (one step per write transaction).
@Entity({ name: 'thread_revisions' })
export class ThreadRevisionEntity {
  @PrimaryColumn({ name: 'tenant_id', type: 'text' })
  tenantId: string;

  @PrimaryColumn({ name: 'thread_id', type: 'text' })
  threadId: string;

  @Column({ type: 'bigint' })
  revision: string;

  // Live files of the thread, for the per-thread file limit.
  @Column({ type: 'integer', default: 0 })
  files: number;
}

// Running total of a tenant's thread-file bytes, for the quota. Its row is also the
// lock that serialises a tenant's filesystem writes.
@Entity({ name: 'tenant_storage' })
export class TenantStorageEntity {
  @PrimaryColumn({ name: 'tenant_id', type: 'text' })
  tenantId: string;

  @Column({ type: 'bigint', default: 0 })
  bytes: string;
}

export const VFS_ENTITIES = [ThreadFileEntity, ThreadRevisionEntity, TenantStorageEntity];
