import { BATCH_HOLD, lockHeld, MS_TEXT, sentRecorded } from "./fragments.js";
import type { Script } from "./script.js";

/**
 * Spaces one account's requests evenly across every process: each request reserves the next
 * slot, `interval * weight` ms after the previous one (GCRA's theoretical arrival time, kept in
 * Redis, on Redis's clock). Even spacing, unlike a burst of a whole second's quota at once,
 * keeps requests from queueing on the way, so they arrive as spaced as they were reserved.
 * One call reserves for several requests of the account in turn, as separate calls would.
 *
 * The reservation is the last step before a request leaves (or the one before clearance, for
 * a slot further away), so the same script also checks everything that must hold when it
 * leaves: the job's lock is still this worker's, its batch was not cancelled and does not hold
 * its jobs (awaiting approval, or scheduled for later), a kind without
 * an idempotency key was not sent before (clearance records it as sent), the account is not
 * paused (a 429's Retry-After or an operator's pause). It serves lanes in order
 * (docs/pipeline.md, "Lanes"): a bulk request takes a slot only when it is at most `bulkAhead`
 * ms away, and hands its job back when a lookup or urgent job waits to be fetched; a lookup or
 * urgent request takes the earliest slot a bulk request reserved but has not cleared yet (that
 * bulk request then asks again), else the next free one up to `maxAhead` ms ahead, but never
 * more than `cap` slots in a row while bulk waits; when bulk waits only in the queue (every
 * worker busy with lookups and urgent jobs), its oldest job is moved to the queue's front and
 * the lookup or urgent job hands its own back to make room.
 *
 * A slot at least `lead` ms away, or of a request that records "sent", is cleared before its
 * request leaves (CLEAR_SLOTS); a nearer one is not (its clearance could not come back in
 * time), so only a bulk slot of those is one a lookup or urgent request may take. A request
 * that records "sent" takes a slot at least `lead` ms away, so that its clearance is in time.
 *
 * KEYS: 1 slot (tat), 2 lane state (hash: run, bulkBy), 3 the account's pause, 4 its operator
 * pause, 5 the queue's prioritized set, 6 hand-back count, 7 bulk slots reserved ahead
 * (zset); then per request i, from 8 + 3(i - 1): its hold (a batch's meta or a job's hold),
 * job lock, job hash.
 * ARGV: 1 interval, 2 maxAhead, 3 bulkAhead, 4 cap, 5 slack, 6 lead; then per request, from
 * 7 + 5(i - 1): weight, lane priority, hold flag ('1': read its hold), lock token ('' for none),
 * sent flag ('1': refused when the job's hash has its "sent" field; clearance sets it).
 * Answers three values a request: status, value (a delay or a wait, in ms), and the slot's time
 * on Redis's clock when one was reserved; then, last, Redis's time as the script read it (the
 * caller maps slots onto its own clock with it). Status: 0 retry in (value), 1 reserved (value:
 * delay), 2 cancelled (its batch or itself), 3 paused (value: ms), 4 held by an operator, 5 lock
 * lost, 6 hand the job back (yield), 7 already sent, 8 held by its hold (value: ms, or 0 until it
 * is approved).
 */
export const RESERVE_SLOTS: Script = {
  name: "moneyqReserveSlots",
  lua: `${BATCH_HOLD}
${MS_TEXT}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local interval = tonumber(ARGV[1])
local maxAhead = tonumber(ARGV[2])
local bulkAhead = tonumber(ARGV[3])
local cap = tonumber(ARGV[4])
local slack = tonumber(ARGV[5])
local lead = tonumber(ARGV[6])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
local run = tonumber(redis.call('HGET', KEYS[2], 'run') or '0')
local bulkBy = tonumber(redis.call('HGET', KEYS[2], 'bulkBy') or '0')
local pausedMs = redis.call('PTTL', KEYS[3])
local held = redis.call('EXISTS', KEYS[4]) == 1
local yielded = tonumber(redis.call('GET', KEYS[6]) or '0')
local runBefore, bulkByBefore, added = run, bulkBy, false
local waitingHigh = -1
local taken = false
local out = {}
local function answer(status, value, at)
  out[#out + 1] = status
  out[#out + 1] = msText(value)
  out[#out + 1] = msText(at or 0)
end
for i = 1, (#KEYS - 7) / 3 do
  local k = 8 + 3 * (i - 1)
  local a = 7 + 5 * (i - 1)
  local lane = tonumber(ARGV[a + 1])
  local token = ARGV[a + 3]
  local sends = ARGV[a + 4] == '1'
  local hold = nil
  if ARGV[a + 2] == '1' then hold = batchHold(KEYS[k], now) end
  if token ~= '' and not ${lockHeld("KEYS[k + 1]", "token")} then
    answer(5, 0)
  elseif sends and ${sentRecorded("KEYS[k + 2]")} then
    answer(7, 0)
  elseif hold ~= nil and hold < 0 then
    answer(2, 0)
  elseif hold ~= nil then
    answer(8, hold)
  elseif held then
    answer(4, 0)
  elseif pausedMs > 0 then
    answer(3, pausedMs)
  else
    local from = now
    if sends then from = now + lead end
    local start = math.max(tat, from)
    -- As the answer gives it (to the microsecond): the caller decides from that whether the
    -- slot was reserved ahead, so this script must too.
    local delay = tonumber(msText(start - now))
    if lane == 3 then
      local outranked = false
      if run < cap then
        if waitingHigh < 0 then
          waitingHigh = redis.call('ZCOUNT', KEYS[5], 0, 3 * 4294967296 - 1)
        end
        outranked = waitingHigh > yielded
      end
      if outranked then
        yielded = yielded + 1
        redis.call('SET', KEYS[6], tostring(yielded), 'PX', math.ceil(slack))
        answer(6, 0)
      elseif delay > bulkAhead then
        bulkBy = math.max(bulkBy, now + delay - bulkAhead)
        answer(0, delay - bulkAhead)
      else
        tat = start + interval * tonumber(ARGV[a])
        taken = true
        run = 0
        if delay >= lead or sends then
          redis.call('ZADD', KEYS[7], msText(start), msText(start))
          added = true
        end
        answer(1, delay, start)
      end
    elseif run >= cap and now <= bulkBy + slack then
      answer(0, interval)
    elseif run >= cap and redis.call('ZCOUNT', KEYS[5], 3 * 4294967296, '+inf') > 0 then
      -- Bulk's turn, but no bulk job is at the gate: every worker is busy with lookups and
      -- urgent jobs. The oldest bulk job goes to the front of the queue, and this job makes
      -- room for it; bulk counts as waiting until it comes.
      local head = redis.call('ZRANGEBYSCORE', KEYS[5], 3 * 4294967296, '+inf', 'LIMIT', 0, 1)
      redis.call('ZADD', KEYS[5], 0, head[1])
      bulkBy = now + slack
      answer(6, 0)
    else
      local first = redis.call('ZRANGEBYSCORE', KEYS[7], from, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
      if #first > 0 then
        redis.call('ZREM', KEYS[7], first[1])
        run = run + 1
        answer(1, tonumber(first[2]) - now, tonumber(first[2]))
      elseif delay > maxAhead then
        answer(0, delay - maxAhead)
      else
        tat = start + interval * tonumber(ARGV[a])
        taken = true
        run = run + 1
        answer(1, delay, start)
      end
    end
  end
end
if taken then
  redis.call('SET', KEYS[1], msText(tat), 'PX', math.ceil(tat - now) + 1000)
end
-- Written only when changed: this script runs for every request of the account.
if run ~= runBefore or bulkBy ~= bulkByBefore then
  redis.call('HSET', KEYS[2], 'run', tostring(run), 'bulkBy', msText(bulkBy))
  redis.call('PEXPIRE', KEYS[2], 60000)
end
if added then
  -- Slots given up unused (a late worker) are dropped once they are a second old.
  redis.call('ZREMRANGEBYSCORE', KEYS[7], '-inf', now - 1000)
  redis.call('PEXPIRE', KEYS[7], 60000)
end
out[#out + 1] = msText(now)
return out`,
};
