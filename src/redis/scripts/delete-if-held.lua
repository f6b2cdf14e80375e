--[[
  Releases a lock or lease only if its holder still holds it, so a holder whose lock lapsed and
  was taken by another never frees the other's.

  Input:
    KEYS[1] the lock

    ARGV[1] the holder's token

  Output:
    1 when deleted, 0 when the token did not hold it.
]]
--- @include "lock-held"
if lockHeld(KEYS[1], ARGV[1]) then return redis.call('DEL', KEYS[1]) end
return 0
