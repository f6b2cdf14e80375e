--[[
  Takes turns for accounts whose work is due and that nobody serves, oldest due first, each
  held until the lease given. An account whose holder stopped renewing (a process that died)
  is due again from the end of its lease. An account rung for while it is served leaves `due`
  for `rung`: its turn's end puts it back (RELEASE_TURN), so it neither crowds the accounts
  looked at nor is lost.

  Input:
    KEYS[1] due (account → when its work is due, ms)
    KEYS[2] held (account → when its lease ends, ms)
    KEYS[3] rung (accounts rung for while held)

    ARGV[1] now (ms)
    ARGV[2] the lease's end (ms)
    ARGV[3] how many to take at most
    ARGV[4] how many due accounts to look at at most

  Output:
    How many due accounts nobody serves were left, then the accounts taken.
]]
local now = tonumber(ARGV[1])
local lapsed = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'WITHSCORES', 'LIMIT', 0, 1000)
for i = 1, #lapsed, 2 do
  redis.call('ZREM', KEYS[2], lapsed[i])
  redis.call('ZADD', KEYS[1], 'LT', lapsed[i + 1], lapsed[i])
end
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[4]))
local out = { 0 }
local left = tonumber(ARGV[3])
for _, account in ipairs(due) do
  if redis.call('ZSCORE', KEYS[2], account) then
    redis.call('ZREM', KEYS[1], account)
    redis.call('SADD', KEYS[3], account)
  elseif left > 0 then
    left = left - 1
    redis.call('ZREM', KEYS[1], account)
    redis.call('ZADD', KEYS[2], ARGV[2], account)
    out[#out + 1] = account
  else
    out[1] = out[1] + 1
  end
end
return out
