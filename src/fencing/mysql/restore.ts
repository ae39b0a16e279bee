// After restoring a database from a backup, its watermarks are as old as the backup: tokens that were already
// refused would be accepted again. raiseWatermarks puts them back above every token that must stay refused.
import { checkClaim } from '../token';
import type { MysqlDatabase } from './db';
import { FENCE_COLUMN, FENCE_STEP_COLUMN, ident, tombstoneTable, WATERMARKS_TABLE } from './names';

/**
 * Raises every watermark below minToken to minToken (step 0), in the fenced tables named, their tombstone
 * tables and fencing_watermarks, in one transaction: afterwards every token below minToken is refused and
 * minToken itself is accepted as a first step. Returns how many watermarks it raised.
 */
export async function raiseWatermarks(db: MysqlDatabase, minToken: bigint, tables: readonly string[]): Promise<number> {
  const min = checkClaim({ lock: 'restore', token: minToken }).token.toString();
  const targets = [...tables.flatMap((t) => [ident(t), ident(tombstoneTable(t))]), WATERMARKS_TABLE];
  return db.transaction(async (tx) => {
    let raised = 0;
    for (const table of targets) {
      const { affectedRows } = await tx.execute(`UPDATE ${table} SET ${FENCE_COLUMN} = CAST(? AS SIGNED), ${FENCE_STEP_COLUMN} = 0 WHERE ${FENCE_COLUMN} < CAST(? AS SIGNED)`, [min, min]);
      raised += affectedRows;
    }
    return raised;
  });
}
