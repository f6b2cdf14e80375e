--[[
  Sets each row's report line unless it has one: a resumed submission keeps results already in.

  Input:
    KEYS[1] the batch's rows
    KEYS[2] its submission lease

    ARGV[1] the submission's token
    ARGV[2i] then per row i: its number
    ARGV[2i + 1] its report line

  Output:
    1, or 0 (nothing written) if the token no longer holds the lease.
]]
--- @include "lock-held"
if not lockHeld(KEYS[2], ARGV[1]) then return 0 end
for i = 2, #ARGV, 2 do redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1]) end
return 1
