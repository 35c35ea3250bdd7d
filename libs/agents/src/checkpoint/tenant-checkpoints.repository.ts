import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, QueryFailedError } from 'typeorm';
import { assertTenant } from '@drydock/core';
import { CHECKPOINT_SCHEMA } from './checkpoint-schema.js';

const UNDEFINED_TABLE = '42P01';

// Every checkpoint of one tenant's agent threads, whichever API made them (the
// checkpointer keys a thread `<tenantId>:<threadId>`): what deleting the tenant removes.
// Works without an agent runtime (a gateway with no model configured still deletes).
@Injectable()
export class TenantCheckpointsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  // The number of checkpoints removed (writes and blobs go with them). Zero when the
  // checkpointer never created its tables.
  async deleteTenant(tenantId: string): Promise<number> {
    assertTenant(tenantId);
    const prefix = `${tenantId}:`;
    // A prefix compared with left(), not LIKE: tenant ids hold "_", a LIKE wildcard.
    const owned = `left(thread_id, ${prefix.length}) = $1`;
    try {
      return await this.db.transaction(async (tx) => {
        await tx.query(`DELETE FROM "${CHECKPOINT_SCHEMA}".checkpoint_writes WHERE ${owned}`, [prefix]);
        await tx.query(`DELETE FROM "${CHECKPOINT_SCHEMA}".checkpoint_blobs WHERE ${owned}`, [prefix]);
        const [, count] = (await tx.query(`DELETE FROM "${CHECKPOINT_SCHEMA}".checkpoints WHERE ${owned}`, [prefix])) as [unknown, number];
        return Number(count ?? 0);
      });
    } catch (error) {
      if (error instanceof QueryFailedError && (error.driverError as { code?: string }).code === UNDEFINED_TABLE) return 0;
      throw error;
    }
  }
}
