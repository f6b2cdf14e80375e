--[[
  Spaces one account's requests evenly across every process: each request reserves the next
  slot, `interval * weight` ms after the previous one (GCRA's theoretical arrival time, kept in
  Redis, on Redis's clock). Even spacing, unlike a burst of a whole second's quota at once,
  keeps requests from queueing on the way, so they arrive as spaced as they were reserved.
  One call reserves for several requests of the account in turn, as separate calls would.

  The reservation is the last step before a request leaves (or the one before clearance, for
  a slot further away), so the same script also checks everything that must hold when it
  leaves: the job's lock is still this worker's, its batch was not cancelled and does not hold
  its jobs (awaiting approval, or scheduled for later), a kind without
  an idempotency key was not sent before (clearance records it as sent), the account is not
  paused (a 429's Retry-After or an operator's pause). It serves lanes in order
  (docs/pipeline.md, "Lanes"): a bulk request takes a slot only when it is at most `bulkAhead`
  ms away, and hands its job back when a lookup or urgent job waits to be fetched; a lookup or
  urgent request takes the earliest slot a bulk request reserved but has not cleared yet (that
  bulk request then asks again), else the next free one up to `maxAhead` ms ahead, but never
  more than `cap` slots in a row while bulk waits; when bulk waits only in the queue (every
  worker busy with lookups and urgent jobs), its oldest job is moved to the queue's front and
  the lookup or urgent job hands its own back to make room. A bulk job held by its lane or a
  velocity limit while bulk has its turn passes the turn at once to the next bulk job (moved
  to the front): a held currency's rows are set aside at the speed of a round trip, and the
  account's other currencies reach the gate behind them, instead of one row per turn.

  A slot at least `lead` ms away, or of a request that records "sent", is cleared before its
  request leaves (CLEAR_SLOTS); a nearer one is not (its clearance could not come back in
  time), so only a bulk slot of those is one a lookup or urgent request may take. A request
  that records "sent" takes a slot at least `lead` ms away, so that its clearance is in time.

  A payout's request (an outflow spec) is also checked against its currency's lane hold
  (insufficient funds: held until resumed, or until the hold's time) and its velocity limits
  (docs/safety.md): each limit is a log of the requests counted in its rolling window (a zset of
  `jobId:units` by time) and their totals (hash: n, u); the window's expired entries leave as
  it is read. A request over a limit is held (its job joins the account's held set) for as long
  as the window needs to make room, unless an operator's release gave its job a pass; a request
  that takes a slot is counted in every log, once per job (a job asking again is not counted
  twice, nor held by its own count).

  Input:
    KEYS[1] slot (tat)
    KEYS[2] lane state (hash: run, bulkBy)
    KEYS[3] the account's pause
    KEYS[4] its operator pause
    KEYS[5] the queue's prioritized set
    KEYS[6] hand-back count
    KEYS[7] bulk slots reserved ahead (zset)
    KEYS[8] lane holds (hash: currency -> 'insufficient_funds|untilMs', 'velocity:' currency ->
      untilMs)
    KEYS[9] held jobs (zset of 'cause|currency|jobId' by time)
    KEYS[10] passes (set of job ids)
    KEYS[k] per request i, from k = 11 + 3(i - 1): its hold (a batch's meta or a job's hold)
    KEYS[k + 1] its job lock
    KEYS[k + 2] its job hash
    KEYS[...] then the velocity logs and totals the outflow specs name by index

    ARGV[1] interval
    ARGV[2] maxAhead
    ARGV[3] bulkAhead
    ARGV[4] cap
    ARGV[5] slack
    ARGV[6] lead
    ARGV[7] the number of requests
    ARGV[a] per request i, from a = 8 + 7(i - 1): weight
    ARGV[a + 1] lane priority
    ARGV[a + 2] hold flag ('1': read its hold)
    ARGV[a + 3] lock token ('' for none)
    ARGV[a + 4] sent flag ('1': refused when the job's hash has its "sent" field; clearance sets
      it)
    ARGV[a + 5] outflow spec ('' for none; else `currency units n` and per limit `logKey totalsKey
      windowMs maxUnits maxCount scope`, keys as KEYS indices, -1 for no maximum, scope
      `currency` or `beneficiary`)
    ARGV[a + 6] job id

  Output:
    Three values a request: status (RESERVE_STATUS, lua-constants.ts), value (a delay or a
    wait, in ms), and the slot's time on Redis's clock when one was reserved; then, one a
    request, the ms its job's lock has left when it reserved a slot with a lock token, else -1;
    then, last, Redis's time as the script read it (the caller maps slots onto its own clock with
    it). For VELOCITY_HELD, the third value says whether this hold began the currency's velocity
    hold, and by which limit (VELOCITY_HOLD_BEGUN), else 0.
]]
--- @include "batch-hold"
--- @include "ms-text"
--- @include "lock-held"
--- @include "sent-record"
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
local locksLeft = {}
local function answer(status, value, at)
  out[#out + 1] = status
  out[#out + 1] = msText(value)
  out[#out + 1] = msText(at or 0)
end
local function fields(spec)
  local f = {}
  for w in string.gmatch(spec, '%S+') do f[#f + 1] = w end
  return f
end
local function unitsOf(member)
  return tonumber(string.match(member, ':(%d+)$'))
end
-- How long until the window makes room for one more request of `units` (0: room now).
local function velocityWait(log, totals, window, maxUnits, maxCount, units)
  local gone = redis.call('ZRANGEBYSCORE', log, '-inf', msText(now - window))
  if #gone > 0 then
    local freed = 0
    for _, m in ipairs(gone) do freed = freed + unitsOf(m) end
    redis.call('HINCRBY', totals, 'n', -#gone)
    redis.call('HINCRBY', totals, 'u', string.format('%d', -freed))
    redis.call('ZREMRANGEBYSCORE', log, '-inf', msText(now - window))
  end
  local counted = redis.call('HMGET', totals, 'n', 'u')
  local needCount, needUnits = 0, 0
  if maxCount >= 0 then needCount = tonumber(counted[1] or '0') + 1 - maxCount end
  if maxUnits >= 0 then needUnits = tonumber(counted[2] or '0') + units - maxUnits end
  if needCount <= 0 and needUnits <= 0 then return 0 end
  -- Never room for it in a window: held until released.
  if maxCount == 0 or (maxUnits >= 0 and units > maxUnits) then return window end
  local oldest = redis.call('ZRANGE', log, 0, 999, 'WITHSCORES')
  local count, sum = 0, 0
  for j = 1, #oldest, 2 do
    count = count + 1
    sum = sum + unitsOf(oldest[j])
    if count >= needCount and sum >= needUnits then
      return math.max(1, tonumber(oldest[j + 1]) + window - now)
    end
  end
  return window
end
-- Why a payout's request is held, as status, value, at; nil when it may take a slot.
local function outflowHold(f, jobId)
  local currency, units, n = f[1], tonumber(f[2]), tonumber(f[3])
  local funds = redis.call('HGET', KEYS[8], currency)
  if funds then
    local untilMs = tonumber(string.match(funds, '|(%d+)$') or '0')
    if untilMs == 0 or untilMs > now then
      redis.call('ZADD', KEYS[9], 'NX', msText(now), 'insufficient_funds|' .. currency .. '|' .. jobId)
      if untilMs == 0 then return RESERVE_STATUS.FUNDS_HELD, 0, 0 end
      return RESERVE_STATUS.FUNDS_HELD, untilMs - now, 0
    end
    redis.call('HDEL', KEYS[8], currency)
  end
  if n == 0 or redis.call('SISMEMBER', KEYS[10], jobId) == 1 then return nil end
  if redis.call('ZSCORE', KEYS[tonumber(f[4])], jobId .. ':' .. f[2]) then return nil end
  local wait, scope = 0, 'currency'
  for j = 0, n - 1 do
    local b = 4 + 6 * j
    local w = velocityWait(KEYS[tonumber(f[b])], KEYS[tonumber(f[b + 1])], tonumber(f[b + 2]),
      tonumber(f[b + 3]), tonumber(f[b + 4]), units)
    if w > wait then wait, scope = w, f[b + 5] end
  end
  if wait == 0 then return nil end
  redis.call('ZADD', KEYS[9], 'NX', msText(now), 'velocity|' .. currency .. '|' .. jobId)
  local field = 'velocity:' .. currency
  local marked = tonumber(redis.call('HGET', KEYS[8], field) or '0')
  redis.call('HSET', KEYS[8], field, msText(math.max(marked, now + wait)))
  if marked > now then return RESERVE_STATUS.VELOCITY_HELD, wait, 0 end
  if scope == 'beneficiary' then
    return RESERVE_STATUS.VELOCITY_HELD, wait, VELOCITY_HOLD_BEGUN.BENEFICIARY
  end
  return RESERVE_STATUS.VELOCITY_HELD, wait, VELOCITY_HOLD_BEGUN.CURRENCY
end
-- A payout's request took a slot: counted once in each of its logs; its hold and pass end.
local function countOutflow(f, jobId)
  local n = tonumber(f[3])
  local member = jobId .. ':' .. f[2]
  for j = 0, n - 1 do
    local b = 4 + 6 * j
    local log, totals = KEYS[tonumber(f[b])], KEYS[tonumber(f[b + 1])]
    local keep = tonumber(f[b + 2]) + 60000
    if redis.call('ZADD', log, 'NX', msText(now), member) == 1 then
      redis.call('HINCRBY', totals, 'n', 1)
      redis.call('HINCRBY', totals, 'u', f[2])
    end
    redis.call('PEXPIRE', log, keep)
    redis.call('PEXPIRE', totals, keep)
  end
  if n > 0 then
    redis.call('ZREM', KEYS[9], 'velocity|' .. f[1] .. '|' .. jobId)
    redis.call('SREM', KEYS[10], jobId)
  end
end
for i = 1, tonumber(ARGV[7]) do
  local k = 11 + 3 * (i - 1)
  local a = 8 + 7 * (i - 1)
  local lane = tonumber(ARGV[a + 1])
  local token = ARGV[a + 3]
  local sends = ARGV[a + 4] == '1'
  local outflow = nil
  if ARGV[a + 5] ~= '' then outflow = fields(ARGV[a + 5]) end
  local jobId = ARGV[a + 6]
  local hs, hv, ha = nil, nil, nil
  local hold = nil
  if ARGV[a + 2] == '1' then hold = batchHold(KEYS[k], now) end
  if token ~= '' and not lockHeld(KEYS[k + 1], token) then
    answer(RESERVE_STATUS.LOCK_LOST, 0)
  elseif sends and sentRecorded(KEYS[k + 2]) then
    answer(RESERVE_STATUS.ALREADY_SENT, 0)
  elseif hold ~= nil and hold < 0 then
    answer(RESERVE_STATUS.CANCELLED, 0)
  elseif hold ~= nil then
    answer(RESERVE_STATUS.BATCH_HELD, hold)
  elseif held then
    answer(RESERVE_STATUS.OPERATOR_HELD, 0)
  elseif pausedMs > 0 then
    answer(RESERVE_STATUS.PAUSED, pausedMs)
  else
    if outflow ~= nil then hs, hv, ha = outflowHold(outflow, jobId) end
  end
  if hs ~= nil then
    answer(hs, hv, ha)
    -- A bulk job given bulk's turn but held by its currency's lane or a velocity limit sends
    -- nothing: the turn passes at once to the next bulk job, moved to the queue's front.
    local outflowHeld = hs == RESERVE_STATUS.VELOCITY_HELD or hs == RESERVE_STATUS.FUNDS_HELD
    if lane == BULK_PRIORITY and outflowHeld and run >= cap then
      local head = redis.call('ZRANGEBYSCORE', KEYS[5], BULK_SCORE_MIN, '+inf', 'LIMIT', 0, 1)
      if #head > 0 then
        redis.call('ZADD', KEYS[5], 0, head[1])
        bulkBy = now + slack
      end
    end
  elseif #out < 3 * i then
    local from = now
    if sends then from = now + lead end
    local start = math.max(tat, from)
    -- As the answer gives it (to the microsecond): the caller decides from that whether the
    -- slot was reserved ahead, so this script must too.
    local delay = tonumber(msText(start - now))
    if lane == BULK_PRIORITY then
      local outranked = false
      if run < cap then
        if waitingHigh < 0 then
          waitingHigh = redis.call('ZCOUNT', KEYS[5], 0, BULK_SCORE_MIN - 1)
        end
        outranked = waitingHigh > yielded
      end
      if outranked then
        yielded = yielded + 1
        redis.call('SET', KEYS[6], tostring(yielded), 'PX', math.ceil(slack))
        answer(RESERVE_STATUS.YIELD, 0)
      elseif delay > bulkAhead then
        bulkBy = math.max(bulkBy, now + delay - bulkAhead)
        answer(RESERVE_STATUS.RETRY, delay - bulkAhead)
      else
        tat = start + interval * tonumber(ARGV[a])
        taken = true
        run = 0
        if delay >= lead or sends then
          redis.call('ZADD', KEYS[7], msText(start), msText(start))
          added = true
        end
        answer(RESERVE_STATUS.RESERVED, delay, start)
      end
    elseif run >= cap and now <= bulkBy + slack then
      answer(RESERVE_STATUS.RETRY, interval)
    elseif run >= cap and redis.call('ZCOUNT', KEYS[5], BULK_SCORE_MIN, '+inf') > 0 then
      -- Bulk's turn, but no bulk job is at the gate: every worker is busy with lookups and
      -- urgent jobs. The oldest bulk job goes to the front of the queue, and this job makes
      -- room for it; bulk counts as waiting until it comes.
      local head = redis.call('ZRANGEBYSCORE', KEYS[5], BULK_SCORE_MIN, '+inf', 'LIMIT', 0, 1)
      redis.call('ZADD', KEYS[5], 0, head[1])
      bulkBy = now + slack
      answer(RESERVE_STATUS.YIELD, 0)
    else
      local first = redis.call('ZRANGEBYSCORE', KEYS[7], from, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
      if #first > 0 then
        redis.call('ZREM', KEYS[7], first[1])
        run = run + 1
        answer(RESERVE_STATUS.RESERVED, tonumber(first[2]) - now, tonumber(first[2]))
      elseif delay > maxAhead then
        answer(RESERVE_STATUS.RETRY, delay - maxAhead)
      else
        tat = start + interval * tonumber(ARGV[a])
        taken = true
        run = run + 1
        answer(RESERVE_STATUS.RESERVED, delay, start)
      end
    end
    if outflow ~= nil and out[#out - 2] == RESERVE_STATUS.RESERVED then countOutflow(outflow, jobId) end
  end
  locksLeft[i] = -1
  if token ~= '' and out[#out - 2] == RESERVE_STATUS.RESERVED then
    locksLeft[i] = redis.call('PTTL', KEYS[k + 1])
  end
end
for i = 1, #locksLeft do out[#out + 1] = locksLeft[i] end
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
return out
