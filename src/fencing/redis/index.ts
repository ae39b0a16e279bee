/**
 * Fenced Redis keys (string values) through one server-side Lua script, with the same rules as the SQL
 * helpers. See docs/fencing-downstream.md, "Redis".
 */
export { fencedSet, fencedUpdate, fencedDelete, DEFAULT_OPERATION_TTL_SECONDS, type RedisScripting, type RedisChange, type RedisFencedOutcome, type RedisFencedOptions } from './fenced';
export { raiseWatermarks, type RedisScanning } from './restore';
export { markKey, operationKey, NAMESPACE } from './keys';
export { FENCE_SCRIPT, RAISE_SCRIPT } from './script';
