--[[
  Extends a submission's lease if its holder still holds it, and the batch's `sealBy` with it
  (when the batch has one: a batch submitted by a release before it has none): the instant
  after which the batch, still unsealed, is cancelled. `sealBy` first, so that a Redis
  refusing writes extends neither.

  Input:
    KEYS[1] the lease
    KEYS[2] the batch's meta (the lease again for a lease that is not a batch's)

    ARGV[1] the holder's token
    ARGV[2] the new length in ms

  Output:
    1 when extended, 0 when the token no longer holds it.
]]
--- @include "lock-held"
if not lockHeld(KEYS[1], ARGV[1]) then return 0 end
if KEYS[2] ~= KEYS[1] and redis.call('HEXISTS', KEYS[2], 'sealBy') == 1 then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('HSET', KEYS[2], 'sealBy', tostring(now + tonumber(ARGV[2])))
end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
