// The server-side half of fenced Redis writes: one Lua script that judges the claim against the key's
// watermark and, only if it passes, changes the key, moves the watermark, stores the operation record and
// appends to the outbox stream. Redis runs a script atomically, so no other command runs in between.
//
// Tokens and steps travel as decimal strings and are compared as strings, by length and then lexically (they
// never have leading zeros): Lua numbers are doubles and would see 2^53+1 and 2^53+2 as equal.
import { createHash } from 'node:crypto';

export const FENCE_SCRIPT = `
local data, mark, op = KEYS[1], KEYS[2], KEYS[3]
local action, lock, token, step, ttl, value = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local MAX = '9223372036854775807'
local function valid(n)
  return string.match(n, '^[1-9][0-9]*$') ~= nil and (#n < #MAX or (#n == #MAX and n <= MAX))
end
local function cmp(a, b)
  if #a ~= #b then return #a < #b and -1 or 1 end
  if a == b then return 0 end
  return a < b and -1 or 1
end
if not valid(token) or not valid(step) then return redis.error_reply('fencing: token and step must be decimal 1..' .. MAX) end
if lock == '' then return redis.error_reply('fencing: empty lock') end
local prior = redis.call('GET', op)
if prior then return {'REPLAYED', prior} end
local m = redis.call('HMGET', mark, 'lock', 'fence', 'step')
local mlock, mfence, mstep = m[1] or '', m[2] or '0', m[3] or '0'
if mlock ~= '' and mlock ~= lock then return {'WRONG_LOCK', mfence, mlock} end
local c = cmp(token, mfence)
if c < 0 then return {'STALE', mfence, mlock} end
if c == 0 and cmp(step, mstep) <= 0 then return {'STALE_STEP', mfence, mlock, mstep} end
local before = redis.call('GET', data)
if not before and action ~= 'set' then return {'NOT_FOUND', mfence} end
if action == 'del' then redis.call('DEL', data) else redis.call('SET', data, value) end
redis.call('HSET', mark, 'lock', lock, 'fence', token, 'step', step)
-- The result: the value before the change ('1' .. value), or none ('0').
local result = before and ('1' .. before) or '0'
redis.call('SET', op, step .. ':' .. result, 'EX', ttl)
if #KEYS > 3 then
  local fields = {}
  for i = 7, #ARGV do fields[#fields + 1] = ARGV[i] end
  redis.call('XADD', KEYS[4], '*', 'lock', lock, 'token', token, 'step', step, unpack(fields))
end
return {'APPLIED', result}
`;

/** Raises one watermark below the minimum to it (step 0); 1 if raised. A key with no watermark gets one. */
export const RAISE_SCRIPT = `
local min = ARGV[1]
local fence = redis.call('HGET', KEYS[1], 'fence') or '0'
if #fence > #min or (#fence == #min and fence >= min) then return 0 end
redis.call('HSET', KEYS[1], 'fence', min, 'step', '0')
return 1
`;

export const sha1 = (script: string): string => createHash('sha1').update(script).digest('hex');
