import { BATCH_COMPLETION } from "./fragments.js";
import type { Script } from "./script.js";

/**
 * Records terminal results, each only if its job had none: the job's marker is set, the
 * result appended to the stream, a needs_reconciliation result joins its account's
 * reconciliation backlog (a sorted set by time, trimmed to the retention; replaying the job
 * takes it out, ResultsStore.forget), and, if the job's batch exists, the batch's row is
 * written: its report line, its counters (a replayed row moves from its old result to its new
 * one) and its state once every accepted row has a result. One script, so no crash can count
 * a result twice or lose one; one call records several results in turn, as separate calls
 * would. The request fingerprint of the job's key is kept, if it is, twice as long as the
 * marker from now: a job that ran long never outlives its fingerprint. A marker or fingerprint
 * an earlier release kept without the account is read (never written): such a marker means the
 * job has its result; such a fingerprint is carried to the account's key.
 * KEYS: 1 the results stream; result i has KEYS[7i-5..7i+1]: marker, backlog, batch meta, batch
 * rows, fingerprint (the marker again for a job without a batch), the earlier marker and
 * fingerprint.
 * ARGV: 1 marker TTL in ms, 2 stream length, 3 now in ms; result i has ARGV[3+6(i-1)+1..6]:
 * JSON, result, job id, row, report line ('' without a batch), finishedAt.
 * Answers per result 1 (recorded) or 0 (the job had a result already).
 */
export const EMIT_RESULTS: Script = {
  name: "moneyqEmitResults",
  lua: `${BATCH_COMPLETION}
local ttl, maxLen, now = ARGV[1], ARGV[2], tonumber(ARGV[3])
local out = {}
for i = 1, (#KEYS - 1) / 7 do
  local k, a = 1 + 7 * (i - 1), 3 + 6 * (i - 1)
  local json, result, jobId, row, line, finishedAt =
    ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5], ARGV[a + 6]
  if redis.call('EXISTS', KEYS[k + 6]) == 1 or not redis.call('SET', KEYS[k + 1], json, 'NX', 'PX', ttl) then
    out[i] = 0
  else
    out[i] = 1
    local fingerprint = redis.call('GET', KEYS[k + 5]) or redis.call('GET', KEYS[k + 7])
    if fingerprint then redis.call('SET', KEYS[k + 5], fingerprint, 'PX', 2 * tonumber(ttl)) end
    redis.call('XADD', KEYS[1], 'MAXLEN', '~', maxLen, '*', 'result', json)
    if result == 'needs_reconciliation' then
      redis.call('ZADD', KEYS[k + 2], now, jobId)
      redis.call('ZREMRANGEBYSCORE', KEYS[k + 2], '-inf', now - tonumber(ttl))
    end
    if line ~= '' and redis.call('EXISTS', KEYS[k + 3]) == 1 then
      local meta, rows = KEYS[k + 3], KEYS[k + 4]
      local previous = redis.call('HGET', rows, row)
      local before = previous and cjson.decode(previous).result or 'queued'
      if before == 'queued' then
        redis.call('HINCRBY', meta, 'done', 1)
      else
        redis.call('HINCRBY', meta, 'n:' .. before, -1)
      end
      redis.call('HINCRBY', meta, 'n:' .. result, 1)
      redis.call('HSET', rows, row, line)
      local m = batchProgress(meta)
      local state = m[1]
      if state == 'queued' or state == 'validating' then
        state = 'running'
        redis.call('HSET', meta, 'state', state, 'startedAt', finishedAt)
      end
      if allFinished(m) and state ~= 'validating' then
        if state ~= 'cancelled' then
          state = finishedState(m)
        end
        redis.call('HSET', meta, 'state', state, 'finishedAt', finishedAt)
      end
    end
  end
end
return out`,
};
