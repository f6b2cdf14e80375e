--[[
  Claims an account's re-checks that are due: each is pushed back by the lease as it is taken,
  so one whose process dies comes due again after it, and no two processes take it at once.

  Input:
    KEYS[1] the account's re-checks

    ARGV[1] now (ms)
    ARGV[2] the lease (ms)
    ARGV[3] how many at most

  Output:
    The members claimed.
]]
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local leased = tonumber(ARGV[1]) + tonumber(ARGV[2])
for _, member in ipairs(due) do redis.call('ZADD', KEYS[1], leased, member) end
return due
