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
--- @include "batch-row-mark"
if ARGV[6] ~= '' then redis.call('ZREM', KEYS[3], ARGV[6]) end
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 0 end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'event', ARGV[4])
local function unreversed(l) return l.result == 'succeeded' and not l.reversedAt end
markRow(KEYS[4], KEYS[5], ARGV[5], unreversed, {{'reversedAt', ARGV[7]}}, 'reversed',
  'succeeded', 'reversed')
return 1
