--[[
  Marks a batch cancelled (with `cancelledAt`) if it is in a cancellable state, and appends
  its `batch.cancelled` event.

  Input:
    KEYS[1] the batch's meta
    KEYS[2] the results stream

    ARGV[1] now (ISO time)
    ARGV[2] the stream's length

  Output:
    The state the batch had before (nil when it does not exist).
]]
--- @include "cancellable"
--- @include "batch-totals"
--- @include "batch-event"
local state = redis.call('HGET', KEYS[1], 'state')
if cancellable(state) then
  redis.call('HSET', KEYS[1], 'state', 'cancelled', 'cancelledAt', ARGV[1], 'cancelReason', 'cancelled')
  batchEvent(KEYS[2], ARGV[2], KEYS[1], 'batch.cancelled', ARGV[1])
end
return state
