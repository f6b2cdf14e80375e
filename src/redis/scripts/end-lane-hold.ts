import type { Script } from "./script.js";

/**
 * Ends a currency's hold of one cause for the jobs named, and hands back those it still held,
 * first held first, once: a second call finds none. `release` (velocity) also gives each of them
 * a pass past the velocity limits, used as its request takes a slot; `resume` (insufficient
 * funds) and `cancel` give none. The lane's hold itself ends once it holds no job (a resume ends
 * it whatever it holds). Each call is kept in the account's audit trail.
 * KEYS: 1 the account's lane holds (hash), 2 its held jobs (zset), 3 its passes (set), 4 its
 * audit trail (stream).
 * ARGV: 1 cause (`velocity` or `insufficient_funds`), 2 currency, 3 action (`release`,
 * `resume` or `cancel`), 4 who, 5 how long a pass is kept (ms), 6 the trail's length kept,
 * 7.. the job ids.
 * Answers the ids of the named jobs it held, first held first.
 */
export const END_LANE_HOLD: Script = {
  name: "moneyqEndLaneHold",
  numberOfKeys: 4,
  lua: `
local cause, currency, action = ARGV[1], ARGV[2], ARGV[3]
local stem = cause .. '|' .. currency .. '|'
local named = {}
for i = 7, #ARGV do named[ARGV[i]] = true end
local ids, left = {}, 0
for _, member in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  if string.sub(member, 1, #stem) == stem then
    local id = string.sub(member, #stem + 1)
    if named[id] then
      ids[#ids + 1] = id
      redis.call('ZREM', KEYS[2], member)
    else
      left = left + 1
    end
  end
end
if action == 'release' then
  for _, id in ipairs(ids) do redis.call('SADD', KEYS[3], id) end
  if #ids > 0 then redis.call('PEXPIRE', KEYS[3], ARGV[5]) end
end
if left == 0 or action == 'resume' then
  if cause == 'velocity' then
    redis.call('HDEL', KEYS[1], 'velocity:' .. currency)
  else
    redis.call('HDEL', KEYS[1], currency)
  end
end
redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[6], '*', 'action', action, 'cause', cause,
  'currency', currency, 'by', ARGV[4], 'jobs', tostring(#ids))
return ids`,
};
