/**
 * Fencing downstream resources with fencelock's tokens: PostgreSQL rows and resources, an HTTP convention
 * with a middleware for Node's http server, and a checking reverse proxy for services that cannot check.
 * No dependency on the server code. See docs/fencing-downstream.md.
 */
export { MAX_FENCING_TOKEN, FencingClaimError, checkClaim, parseFencingNumber, type FencingClaim, type CheckedClaim } from './token';
export { judge, type Refusal, type Watermark } from './watermark';
export { pgPoolDatabase, pgClientDatabase, type PgClientLike, type PgPoolLike, type SqlDatabase, type SqlSession } from './sql/db';
export { ensureFencingSchema, fencedColumnsSql, FencingSchemaError, FENCING_TABLES_SQL } from './sql/schema';
export { fencedUpdate, fencedUpsert, fencedDelete, withFence, type FencedOutcome, type FencedOptions, type RowTarget } from './sql/fenced';
export { raiseWatermarks } from './sql/restore';
export { FencedTableError } from './sql/rowIdentity';
export { OPERATIONS_TABLE, WATERMARKS_TABLE, FENCE_COLUMN, FENCE_LOCK_COLUMN, FENCE_STEP_COLUMN } from './sql/names';
export * from './http/headers';
export { claimFromHeaders } from './http/claim';
export { fencedHttpHandler, type FencedHttpOptions, type FencedRequest, type FencedResponse } from './http/middleware';
export { FencingProxy, type FencingProxyOptions, type ResourceRule } from './proxy/proxy';
export { WatermarkLog } from './proxy/watermarkLog';
/** MariaDB/MySQL (mysql2): `mysqlFencing.fencedUpdate(...)`, same shape as the PostgreSQL helpers above. */
export * as mysqlFencing from './mysql';
/** Redis (ioredis or any client with eval/evalsha): `redisFencing.fencedSet(...)`. */
export * as redisFencing from './redis';
