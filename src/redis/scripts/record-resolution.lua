--[[
  Resolves a job whose outcome was left to reconciliation (or recorded `failed`) with evidence,
  once: the resolution's marker is set (kept as long as a result's), the event `job.resolved`
  appended to the results stream, the entry to the account's audit trail, the job taken out of
  the reconciliation backlog, and, in its batch, the row's report line marked with what it was
  resolved to and its money moved from its recorded result's total to that one (the batch's
  `resolved` counts it). The recorded result stays as it was.

  Input:
    KEYS[1] the resolution's marker
    KEYS[2] the results stream
    KEYS[3] the account's audit trail
    KEYS[4] its reconciliation backlog
    KEYS[5] the batch's meta (the marker again for a job without a batch)
    KEYS[6] the batch's rows (the marker again for a job without a batch)

    ARGV[1] the resolution's JSON
    ARGV[2] the marker's TTL (ms)
    ARGV[3] the stream's length
    ARGV[4] the event's JSON
    ARGV[5] the job id
    ARGV[6] the job's row ('' for none)
    ARGV[7] the recorded result's bucket (`needs_reconciliation`, `failed`)
    ARGV[8] the resolved one (`succeeded`, `failed`)
    ARGV[9] when (ISO 8601)
    ARGV[10] the audit trail's length

  Output:
    1 (resolved) or 0 (resolved before).
]]
--- @include "batch-row-mark"
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 0 end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'event', ARGV[4])
redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[10], '*', 'entry', ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[5])
local function unresolved(l) return not l.resolvedAs end
markRow(KEYS[5], KEYS[6], ARGV[6], unresolved, {{'resolvedAs', ARGV[8]}, {'resolvedAt', ARGV[9]}},
  'resolved', ARGV[7], ARGV[8])
return 1
