--[[
  Ends a currency's hold of one cause for the jobs named, and hands back those it still held,
  first held first, once: a second call finds none. `release` (velocity) also gives each of them
  a pass past the velocity limits, used as its request takes a slot; `resume` (insufficient
  funds) and `cancel` give none. The lane's hold itself ends once it holds no job (a resume ends
  it whatever it holds). Each call is kept in the account's audit trail.

  Input:
    KEYS[1] the account's lane holds (hash)
    KEYS[2] its held jobs (zset)
    KEYS[3] its passes (set)
    KEYS[4] its audit trail (stream)

    ARGV[1] cause (`velocity` or `insufficient_funds`)
    ARGV[2] currency
    ARGV[3] action (`release`, `resume` or `cancel`)
    ARGV[4] who
    ARGV[5] how long a pass is kept (ms)
    ARGV[6] the trail's length kept
    ARGV[7...] the job ids

  Output:
    The ids of the named jobs it held, first held first.
]]
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
return ids
