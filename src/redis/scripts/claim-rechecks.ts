import type { Script } from "./script.js";

/**
 * Claims an account's re-checks that are due: each is pushed back by the lease as it is taken,
 * so one whose process dies comes due again after it, and no two processes take it at once.
 * KEYS: 1 the account's re-checks.
 * ARGV: 1 now (ms), 2 the lease (ms), 3 how many at most.
 * Answers the members claimed.
 */
export const CLAIM_RECHECKS: Script = {
  name: "moneyqClaimRechecks",
  numberOfKeys: 1,
  lua: `
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local leased = tonumber(ARGV[1]) + tonumber(ARGV[2])
for _, member in ipairs(due) do redis.call('ZADD', KEYS[1], leased, member) end
return due`,
};
