--[[
  Ends a batch's validation, sealing it (its `sealBy` goes, and it leaves the unsealed
  batches): finished already if every job has its result; else `awaiting_approval` (its
  approval is pending), `scheduled` (its `notBefore` is ahead, on Redis's clock) or `queued`.
  A batch that finishes here or awaits approval gets that event.

  Input:
    KEYS[1] the batch's meta
    KEYS[2] its submission lease
    KEYS[3] the results stream
    KEYS[4] the account's unsealed batches

    ARGV[1] now (ISO time)
    ARGV[2] the submission's token
    ARGV[3] the stream's length
    ARGV[4] the batch id

  Output:
    `lost` (nothing changed) if the token no longer holds the lease; the state the batch had
    if it was past validation; else its new state.
]]
--- @include "batch-completion"
--- @include "batch-totals"
--- @include "batch-event"
--- @include "lock-held"
if not lockHeld(KEYS[2], ARGV[2]) then return 'lost' end
local m = batchProgress(KEYS[1])
if m[1] ~= 'validating' then return m[1] end
-- The new state is written before sealBy goes: a Redis that refuses the write (out of memory)
-- leaves the batch unsealed, and held, rather than sealed in part.
local function seal()
  redis.call('HDEL', KEYS[1], 'sealBy')
  redis.call('ZREM', KEYS[4], ARGV[4])
end
if allFinished(m) then
  local state = finishedState(m)
  redis.call('HSET', KEYS[1], 'state', state, 'finishedAt', ARGV[1])
  seal()
  batchEvent(KEYS[3], ARGV[3], KEYS[1], 'batch.' .. state, ARGV[1])
  return state
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local hold = redis.call('HMGET', KEYS[1], 'approval', 'notBeforeMs')
local state = 'queued'
if hold[1] == 'pending' then
  state = 'awaiting_approval'
elseif tonumber(hold[2] or '0') > now then
  state = 'scheduled'
end
redis.call('HSET', KEYS[1], 'state', state)
seal()
if state == 'awaiting_approval' then
  batchEvent(KEYS[3], ARGV[3], KEYS[1], 'batch.awaiting_approval', ARGV[1])
end
return state
