--[[
  batchEvent(stream, maxLen, meta, type, at): appends the event `type` to the results stream in
  the event envelope (results/event-envelope.ts), with the batch's summary and totals as its
  meta holds them, or, from a job's hold (it has `jobId`), the job's. Its id derives from
  account, batch or job, and type: each type happens at most once to a batch or a job, and a
  receiver sees the same id however it is delivered. The meta fields in OPTIONAL_FIELDS are
  carried when the batch has them.
]]
--- @include "batch-totals"
local OPTIONAL_FIELDS = {
  'startedAt', 'finishedAt', 'cancelledAt', 'cancelReason', 'notBefore', 'submittedBy',
  'approvalExpiresAt', 'approvedBy', 'approvedAt', 'rejectedBy', 'rejectedAt'
}
local function batchEvent(stream, maxLen, meta, type, at)
  local f = redis.call('HGETALL', meta)
  local m = {}
  for i = 1, #f, 2 do m[f[i]] = f[i + 1] end
  local function n(field) return tonumber(m[field] or '0') end
  local counts, totals = {}, {}
  for field, value in pairs(m) do
    local kind = string.match(field, '^n:(.+)$')
    if kind then counts[kind] = tonumber(value) end
    local currency, bucket, part = string.match(field, '^t:(%u+):([%a_]+):(%a+)$')
    if currency then
      totals[currency] = totals[currency] or {}
      totals[currency][bucket] = totals[currency][bucket] or {}
      totals[currency][bucket][part] = value
    end
  end
  for currency, buckets in pairs(totals) do
    local scale = n('t:' .. currency .. ':scale')
    for _, b in pairs(buckets) do
      b.rows = tonumber(b.rows or '0')
      b.amount = amountOf(b.units or '0', scale)
      b.units = nil
    end
  end
  local data
  if m.jobId then
    data = {
      jobId = m.jobId, account = m.account, kind = m.kind,
      idempotencyKey = m.idempotencyKey, state = m.state, createdAt = m.createdAt
    }
  else
    data = {
      batchId = m.id, account = m.account, kind = m.kind, state = m.state,
      rows = n('rows'), accepted = n('accepted'), invalid = n('invalid'),
      duplicates = n('duplicates'), finished = n('done'), counts = counts,
      createdAt = m.createdAt
    }
    if next(totals) ~= nil then data.totals = totals end
  end
  for _, field in ipairs(OPTIONAL_FIELDS) do
    if m[field] then data[field] = m[field] end
  end
  local key = (m.account or '') .. '\0' .. (m.id or m.jobId or '') .. '\0' .. type
  local id = 'evt_' .. string.sub(redis.sha1hex(key), 1, 32)
  local event = cjson.encode({ type = type, id = id, timestamp = at, data = data })
  redis.call('XADD', stream, 'MAXLEN', '~', maxLen, '*', 'event', event)
end