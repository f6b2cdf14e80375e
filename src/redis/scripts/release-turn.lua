--[[
  Ends an account's turn: due again at `at` if it has work then (or earlier, if already due),
  now if it was rung for while held; handed over with work left, at the back of the line now.

  Input:
    KEYS[1] due (as claim-turns.lua)
    KEYS[2] held
    KEYS[3] rung

    ARGV[1] the account
    ARGV[2] when its work is due (ms) or '' for none
    ARGV[3] now (ms)
    ARGV[4] '1' to go to the back of the line

  Output:
    1.
]]
redis.call('ZREM', KEYS[2], ARGV[1])
local rung = redis.call('SREM', KEYS[3], ARGV[1]) == 1
if ARGV[2] == '' and not rung then return 1 end
if ARGV[4] == '1' then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  return 1
end
if rung then redis.call('ZADD', KEYS[1], 'LT', ARGV[3], ARGV[1]) end
if ARGV[2] ~= '' then redis.call('ZADD', KEYS[1], 'LT', ARGV[2], ARGV[1]) end
return 1
