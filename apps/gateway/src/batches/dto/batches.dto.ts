import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';

export const ITEM_STATUSES = ['queued', 'running', 'ok', 'error', 'timeout', 'memory', 'killed', 'cancelled'] as const;

export class ListBatchesQueryDto {
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(500)
  limit?: number;

  // The id of the last batch of the previous page (the answer's `next`).
  @IsOptional() @IsString() @Matches(/^bat_[A-Za-z0-9_-]{1,64}$/, { message: 'before must be a batch id' })
  before?: string;
}

export class ListItemsQueryDto {
  @IsOptional() @IsIn(ITEM_STATUSES, { message: `status must be one of ${ITEM_STATUSES.join(', ')}` })
  status?: (typeof ITEM_STATUSES)[number];

  @IsOptional() @Type(() => Number) @IsInt() @Min(0)
  offset?: number;

  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000)
  limit?: number;
}

export class CancelBatchDto {
  // Also stop the items running now (they end `killed`); otherwise they finish.
  @IsOptional() @IsBoolean()
  kill?: boolean;
}
