--[[
  batchHold(meta, now): whether a job of the batch whose meta is `meta` must not leave at `now`
  (ms), and for how long. -1: never (the batch was cancelled, or its approval expired while
  pending); 0: until the batch is approved; a positive number: that many ms (until its
  submission is sealed, at the latest its `sealBy` plus SEAL_HOLD_MARGIN_MS; until its
  `notBefore`; until its pending approval expires); nil: it may leave. A batch still validating
  without `sealBy` was submitted by a release that did not hold its jobs: they may leave, as
  they could then.
]]
local function batchHold(meta, now)
  local b = redis.call('HMGET', meta, 'state', 'approval', 'notBeforeMs', 'approvalExpiresMs', 'sealBy')
  if b[1] == 'cancelled' then return -1 end
  if b[1] == 'validating' and b[5] then
    return math.max(tonumber(b[5]) - now, 0) + SEAL_HOLD_MARGIN_MS
  end
  if b[2] == 'pending' then
    local expires = tonumber(b[4] or '0')
    if expires <= 0 then return 0 end
    if now >= expires then return -1 end
    return expires - now
  end
  local notBefore = tonumber(b[3] or '0')
  if notBefore > now then return notBefore - now end
  return nil
end
