--[[
  Pauses an account until `ms` from now, unless it is paused longer already.

  Input:
    KEYS[1] the account's pause

    ARGV[1] ms

  Output:
    1.
]]
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
end
return 1
