/**
 * Fenced rows and resources in MariaDB/MySQL (mysql2), with the same rules and the same API shape as the
 * PostgreSQL helpers. See docs/fencing-downstream.md, "MariaDB / MySQL".
 */
export { mysqlPoolDatabase, mysqlSession, exactBigints, type MysqlDatabase, type MysqlSession, type MysqlRow, type MysqlPool, type MysqlPoolConnection, type TypeCast } from './db';
export { ensureFencingSchema, tombstoneTableSql, MYSQL_FENCING_TABLES_SQL, type FencedTable } from './schema';
export { fencedUpdate, fencedUpsert, fencedDelete, withFence, type FencedOutcome, type FencedOptions, type RowTarget } from './fenced';
export { raiseWatermarks } from './restore';
export { OPERATIONS_TABLE, WATERMARKS_TABLE, TOMBSTONES_PREFIX, FENCE_COLUMN, FENCE_LOCK_COLUMN, FENCE_STEP_COLUMN, tombstoneTable } from './names';
