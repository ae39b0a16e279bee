// After restoring a database from a backup, its watermarks are as old as the backup: tokens that were already
// refused would be accepted again. raiseWatermarks puts them back above every token that must stay refused.
import { checkClaim } from '../token';
import type { SqlDatabase } from './db';
import { FENCE_COLUMN, FENCE_STEP_COLUMN, ident, WATERMARKS_TABLE } from './names';

/**
 * Raises every watermark below minToken to minToken (step 0), in the fenced tables named and in
 * fencing_watermarks, in one transaction: afterwards every token below minToken is refused, and minToken itself
 * is accepted as a first step. Pass the lowest token still to be accepted: the current holder's token
 * (`describe(lock).token`), or `latestToken + 1n` when nobody holds the lock; for many locks at once, the
 * cluster's commit index + 1 (tokens are log indexes). Returns how many watermarks it raised.
 */
export async function raiseWatermarks(db: SqlDatabase, minToken: bigint, tables: readonly string[]): Promise<number> {
  const min = checkClaim({ lock: 'restore', token: minToken }).token.toString();
  return db.transaction(async (tx) => {
    let raised = 0;
    for (const [table, fence, step] of [...tables.map((t) => [ident(t), FENCE_COLUMN, FENCE_STEP_COLUMN]), [WATERMARKS_TABLE, 'fence', 'step']]) {
      const { rows } = await tx.query(`WITH r AS (UPDATE ${table} SET ${fence} = $1::bigint, ${step} = 0 WHERE ${fence} < $1::bigint RETURNING 1) SELECT count(*)::int AS n FROM r`, [min]);
      raised += (rows[0] as { n: number }).n;
    }
    return raised;
  });
}
