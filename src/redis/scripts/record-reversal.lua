--[[
  Records a succeeded job's reversal (or return) once: its marker is set (kept as long as a
  result's), the event `job.reversed` appended to the results stream, the job's re-checks
  ended, and, in its batch, the row's report line marked reversed and its money moved from the
  `succeeded` total to `reversed` (the batch's `reversed` counts it; its result stays
  `succeeded`).

  Input:
    KEYS[1] the job's reversal marker
    KEYS[2] the results stream
    KEYS[3] the account's re-checks
    KEYS[4] the batch's meta (the marker again for a job without a batch)
    KEYS[5] the batch's rows (the marker again for a job without a batch)

    ARGV[1] the reversal's JSON
    ARGV[2] the marker's TTL (ms)
    ARGV[3] the stream's length
    ARGV[4] the event's JSON
    ARGV[5] the job's row ('' for none)
    ARGV[6] the job's re-check member to end ('' for none)
    ARGV[7] when the reversal was found (ISO 8601)

  Output:
    1 (recorded) or 0 (recorded before).
]]
--- @include "batch-totals"
if ARGV[6] ~= '' then redis.call('ZREM', KEYS[3], ARGV[6]) end
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 0 end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'event', ARGV[4])
local meta, rows, row = KEYS[4], KEYS[5], ARGV[5]
if row ~= '' and redis.call('EXISTS', meta) == 1 then
  local line = redis.call('HGET', rows, row)
  local l = line and cjson.decode(line)
  if l and l.result == 'succeeded' and not l.reversedAt then
    l.reversedAt = ARGV[7]
    redis.call('HSET', rows, row, cjson.encode(l))
    redis.call('HINCRBY', meta, 'reversed', 1)
    local scale = l.currency and redis.call('HGET', meta, 't:' .. l.currency .. ':scale')
    local units = scale and l.amount and unitsOf(l.amount, tonumber(scale))
    if units then moveTotal(meta, l.currency, units, 'succeeded', 'reversed') end
  end
end
return 1
