import { lockHeld } from "./fragments.js";
import type { Script } from "./script.js";

/**
 * Extends a submission's lease if its holder still holds it, and the batch's `sealBy` with it
 * (when the batch has one: a batch submitted by a release before it has none): the instant
 * after which the batch, still unsealed, is cancelled. `sealBy` first, so that a Redis
 * refusing writes extends neither.
 * KEYS: 1 the lease, 2 the batch's meta.
 * ARGV: 1 the holder's token, 2 the new length in ms.
 * Answers 1 when extended, 0 when the token no longer holds it.
 */
export const RENEW_LEASE: Script = {
  name: "moneyqRenewLease",
  numberOfKeys: 2,
  lua: `
if not ${lockHeld("KEYS[1]", "ARGV[1]")} then return 0 end
if redis.call('HEXISTS', KEYS[2], 'sealBy') == 1 then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('HSET', KEYS[2], 'sealBy', tostring(now + tonumber(ARGV[2])))
end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])`,
};
