--[[
  Cancels a batch whose submission was abandoned: still validating, with a `sealBy` passed on
  Redis's clock, and no submission holding its lease. Reason `submission_abandoned`, with its
  `batch.cancelled` event. Its jobs were never sent: the rate gate held every one of them.

  Input:
    KEYS[1] the batch's meta
    KEYS[2] its submission lease
    KEYS[3] the results stream

    ARGV[1] now (ISO time)
    ARGV[2] the stream's length

  Output:
    `abandoned`; or why not: `missing`, `sealed` (past validation, or from a release that
    kept no `sealBy`), `live` (a submission holds it), `not_due` (its `sealBy` is ahead).
]]
--- @include "batch-totals"
--- @include "batch-event"
local m = redis.call('HMGET', KEYS[1], 'state', 'sealBy')
if not m[1] then return 'missing' end
if m[1] ~= 'validating' or not m[2] then return 'sealed' end
if redis.call('EXISTS', KEYS[2]) == 1 then return 'live' end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
if now <= tonumber(m[2]) then return 'not_due' end
redis.call('HSET', KEYS[1], 'state', 'cancelled', 'cancelledAt', ARGV[1],
  'cancelReason', 'submission_abandoned')
batchEvent(KEYS[3], ARGV[2], KEYS[1], 'batch.cancelled', ARGV[1])
return 'abandoned'
