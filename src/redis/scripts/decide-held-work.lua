--[[
  Decides work awaiting approval (a batch's meta, or a job's hold), on Redis's clock.
  `approve`: by someone other than its submitter, before its approval expires; it becomes
  `scheduled` (its `notBefore` is ahead) or `queued`, event `<events>.approved`. `reject`: the
  same checks; it becomes `cancelled` (reason `rejected`), event `<events>.rejected`.
  `expire`: only once the approval has expired while pending; it becomes `cancelled` (reason
  `approval_expired`), event `batch.cancelled` for a batch (a job's own result says so).

  Input:
    KEYS[1] the hold (hash)
    KEYS[2] the results stream

    ARGV[1] decision (approve, reject, expire)
    ARGV[2] who decides (a token's name)
    ARGV[3] now (ISO time)
    ARGV[4] the stream's length
    ARGV[5] whose events: `batch` or `job`

  Output:
    `decided` and the new state; or `missing`, `not_awaiting` (with the state),
    `expired`, `not_expired` (expire only), `own_work` (the decider submitted it).
]]
--- @include "batch-totals"
--- @include "batch-event"
local decision, who, at, maxLen, events = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local m = redis.call('HMGET', KEYS[1], 'state', 'approval', 'approvalExpiresMs', 'submittedBy', 'notBeforeMs')
if not m[1] then return {'missing'} end
if m[1] ~= 'awaiting_approval' or m[2] ~= 'pending' then return {'not_awaiting', m[1]} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local expires = tonumber(m[3] or '0')
local expired = expires > 0 and now >= expires
if decision == 'expire' then
  if not expired then return {'not_expired'} end
  redis.call('HSET', KEYS[1], 'state', 'cancelled', 'approval', 'expired', 'cancelledAt', at,
    'cancelReason', 'approval_expired')
  if events == 'batch' then batchEvent(KEYS[2], maxLen, KEYS[1], 'batch.cancelled', at) end
  return {'decided', 'cancelled'}
end
if expired then return {'expired'} end
if m[4] == who then return {'own_work'} end
if decision == 'reject' then
  redis.call('HSET', KEYS[1], 'state', 'cancelled', 'approval', 'rejected', 'rejectedBy', who,
    'rejectedAt', at, 'cancelledAt', at, 'cancelReason', 'rejected')
  batchEvent(KEYS[2], maxLen, KEYS[1], events .. '.rejected', at)
  return {'decided', 'cancelled'}
end
local state = tonumber(m[5] or '0') > now and 'scheduled' or 'queued'
redis.call('HSET', KEYS[1], 'state', state, 'approval', 'approved', 'approvedBy', who,
  'approvedAt', at)
batchEvent(KEYS[2], maxLen, KEYS[1], events .. '.approved', at)
return {'decided', state}
