--[[
  Records terminal results, each only if its job had none: the job's marker is set, the
  result appended to the stream (field `event`, its event envelope; field `result`, the result
  alone, as releases before the envelope wrote it), a needs_reconciliation result joins its account's
  reconciliation backlog (a sorted set by time, trimmed to the retention; replaying the job
  takes it out, ResultsStore.forget), and, if the job's batch exists, the batch's row is
  written: its report line (keeping the row's currency and amount), its counters and
  per-currency totals (a replayed row moves from its old result to its new one), its state,
  and the batch event of a new state (`batch.started`, `batch.completed`,
  `batch.completed_with_failures`). One script, so no crash can count
  a result twice or lose one; one call records several results in turn, as separate calls
  would. The request fingerprint of the job's key is kept, if it is, twice as long as the
  marker from now: a job that ran long never outlives its fingerprint. A marker or fingerprint
  an earlier release kept without the account is read (never written): such a marker means the
  job has its result; such a fingerprint is carried to the account's key. A succeeded payout
  that is looked up again later joins its account's re-checks (processors/rechecks.ts); a
  result with the provider's id is indexed by it (with its request's money), and a success by
  its time, for the reconciliation sweep (both kept as the marker is, the index twice as long).
  A payment recorded under its payment fingerprint (docs/safety.md) is marked `paid` by a
  success, `ended` by a result that paid nothing (failed, rejected, cancelled), and left as it
  is by needs_reconciliation (it may have been paid).

  Input:
    KEYS[1] the results stream
    KEYS[k + 1] per result i, from k = 11(i - 1) + 1: its marker
    KEYS[k + 2] the account's reconciliation backlog
    KEYS[k + 3] the batch's meta
    KEYS[k + 4] the batch's rows
    KEYS[k + 5] the fingerprint (the marker again for a job without a batch)
    KEYS[k + 6] the marker as an earlier release kept it
    KEYS[k + 7] the fingerprint as an earlier release kept it
    KEYS[k + 8] the account's re-checks
    KEYS[k + 9] the provider id's index entry (the marker again for a result without one)
    KEYS[k + 10] the account's successes
    KEYS[k + 11] its payment fingerprint's records (the marker again for a job without one)

    ARGV[1] marker TTL in ms
    ARGV[2] stream length
    ARGV[3] now in ms
    ARGV[a + 1] per result i, from a = 3 + 11(i - 1): its JSON
    ARGV[a + 2] the result
    ARGV[a + 3] the job id
    ARGV[a + 4] the row
    ARGV[a + 5] the report line ('' without a batch)
    ARGV[a + 6] finishedAt
    ARGV[a + 7] the event's JSON up to its data (the result's JSON and a closing brace complete
      it: sent once, not twice)
    ARGV[a + 8] the re-check's member ('' for none)
    ARGV[a + 9] when the re-check is due (ms)
    ARGV[a + 10] the index entry's value ('' for none)
    ARGV[a + 11] when it finished (ms)

  Output:
    Per result 1 (recorded) or 0 (the job had a result already).
]]
--- @include "batch-completion"
--- @include "batch-totals"
--- @include "batch-event"
local ttl, maxLen, now = ARGV[1], ARGV[2], tonumber(ARGV[3])
local bucketOf = { rejected = 'failed' }
local function writeRow(meta, rows, row, line, result)
  local previous = redis.call('HGET', rows, row)
  local before = 'queued'
  local l = cjson.decode(line)
  if previous then
    local p = cjson.decode(previous)
    before = p.result
    l.currency = l.currency or p.currency
    l.amount = l.amount or p.amount
  end
  if before == 'queued' then
    redis.call('HINCRBY', meta, 'done', 1)
  else
    redis.call('HINCRBY', meta, 'n:' .. before, -1)
  end
  redis.call('HINCRBY', meta, 'n:' .. result, 1)
  local scale = l.currency and redis.call('HGET', meta, 't:' .. l.currency .. ':scale')
  local units = scale and l.amount and unitsOf(l.amount, tonumber(scale))
  if units then
    local from = before == 'queued' and 'pending' or (bucketOf[before] or before)
    moveTotal(meta, l.currency, units, from, bucketOf[result] or result)
  end
  redis.call('HSET', rows, row, cjson.encode(l))
end
local out = {}
local function markPayment(key, jobId, result, finishedMs)
  local record = redis.call('HGET', key, jobId)
  if not record or result == 'needs_reconciliation' then return end
  local entry = cjson.decode(record)
  entry.s = result == 'succeeded' and 'paid' or 'ended'
  entry.endedAt = tonumber(finishedMs)
  redis.call('HSET', key, jobId, cjson.encode(entry))
end
for i = 1, (#KEYS - 1) / 11 do
  local k, a = 1 + 11 * (i - 1), 3 + 11 * (i - 1)
  local json, result, jobId, row, line, finishedAt, eventHead =
    ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5], ARGV[a + 6], ARGV[a + 7]
  local recheck, recheckDue, indexed, finishedMs = ARGV[a + 8], ARGV[a + 9], ARGV[a + 10], ARGV[a + 11]
  if redis.call('EXISTS', KEYS[k + 6]) == 1 or not redis.call('SET', KEYS[k + 1], json, 'NX', 'PX', ttl) then
    out[i] = 0
  else
    out[i] = 1
    local fingerprint = redis.call('GET', KEYS[k + 5]) or redis.call('GET', KEYS[k + 7])
    if fingerprint then redis.call('SET', KEYS[k + 5], fingerprint, 'PX', 2 * tonumber(ttl)) end
    local event = eventHead .. json .. '}'
    redis.call('XADD', KEYS[1], 'MAXLEN', '~', maxLen, '*', 'result', json, 'event', event)
    if recheck ~= '' then redis.call('ZADD', KEYS[k + 8], recheckDue, recheck) end
    if indexed ~= '' then redis.call('SET', KEYS[k + 9], indexed, 'PX', 2 * tonumber(ttl)) end
    if result == 'succeeded' then
      redis.call('ZADD', KEYS[k + 10], finishedMs, jobId)
      redis.call('ZREMRANGEBYSCORE', KEYS[k + 10], '-inf', now - tonumber(ttl))
    end
    if KEYS[k + 11] ~= KEYS[k + 1] then markPayment(KEYS[k + 11], jobId, result, finishedMs) end
    if result == 'needs_reconciliation' then
      redis.call('ZADD', KEYS[k + 2], now, jobId)
      redis.call('ZREMRANGEBYSCORE', KEYS[k + 2], '-inf', now - tonumber(ttl))
    end
    if line ~= '' and redis.call('EXISTS', KEYS[k + 3]) == 1 then
      local meta = KEYS[k + 3]
      writeRow(meta, KEYS[k + 4], row, line, result)
      local m = batchProgress(meta)
      local state = m[1]
      if state == 'queued' or state == 'validating' or state == 'scheduled' then
        state = 'running'
        redis.call('HSET', meta, 'state', state, 'startedAt', finishedAt)
        batchEvent(KEYS[1], maxLen, meta, 'batch.started', finishedAt)
      end
      if allFinished(m) and state ~= 'validating' then
        local finished = state == 'cancelled' and state or finishedState(m)
        redis.call('HSET', meta, 'state', finished, 'finishedAt', finishedAt)
        if finished ~= state then
          batchEvent(KEYS[1], maxLen, meta, 'batch.' .. finished, finishedAt)
        end
      end
    end
  end
end
return out
