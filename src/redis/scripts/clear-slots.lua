--[[
  Clearance of a request whose slot was reserved ahead, sent so that its answer comes back as
  the slot begins: the same checks again (a 429 or a lost lock may have come since), its
  lateness on Redis's clock, and, for a bulk slot, that no lookup or urgent request took it
  meanwhile.

  Input:
    KEYS[1] the account's pause
    KEYS[2] its operator pause
    KEYS[3] bulk slots reserved ahead
    KEYS[k] per request i, from k = 4 + 2(i - 1): the job's lock
    KEYS[k + 1] the job's hash

    ARGV[1] tolerance
    ARGV[a] per request i, from a = 2 + 4(i - 1): slot time
    ARGV[a + 1] lock token
    ARGV[a + 2] sent flag (clearance sets the job hash's "sent" field: the record lives as long as
      the job, and goes with it)
    ARGV[a + 3] bulk flag

  Output:
    Two values a request: status (CLEAR_STATUS, lua-constants.ts), value (for PAUSED, ms; for
    CLEAR, the ms its job's lock has left, -1 without a lock token); then, last, Redis's time as
    the script read it.
]]
--- @include "ms-text"
--- @include "lock-held"
--- @include "sent-record"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local pausedMs = redis.call('PTTL', KEYS[1])
local held = redis.call('EXISTS', KEYS[2]) == 1
local tolerance = tonumber(ARGV[1])
local out = {}
local function answer(status, value)
  out[#out + 1] = status
  out[#out + 1] = tostring(value)
end
for i = 1, (#KEYS - 3) / 2 do
  local k = 4 + 2 * (i - 1)
  local a = 2 + 4 * (i - 1)
  local at = tonumber(ARGV[a])
  local token = ARGV[a + 1]
  local mine = true
  if ARGV[a + 3] == '1' then
    -- Reserved with its time to the microsecond (msText): this slot's member alone.
    mine = redis.call('ZREMRANGEBYSCORE', KEYS[3], at - 0.0005, at + 0.0005) > 0
  end
  if token ~= '' and not lockHeld(KEYS[k], token) then
    answer(CLEAR_STATUS.LOCK_LOST, 0)
  elseif not mine then
    answer(CLEAR_STATUS.TAKEN, 0)
  elseif held then
    answer(CLEAR_STATUS.OPERATOR_HELD, 0)
  elseif pausedMs > 0 then
    answer(CLEAR_STATUS.PAUSED, pausedMs)
  elseif now - at > tolerance then
    answer(CLEAR_STATUS.LATE, 0)
  else
    if ARGV[a + 2] == '1' and (token == '' or redis.call('EXISTS', KEYS[k + 1]) == 1) then
      recordSent(KEYS[k + 1], tostring(now))
    end
    local lockLeft = -1
    if token ~= '' then lockLeft = redis.call('PTTL', KEYS[k]) end
    answer(CLEAR_STATUS.CLEAR, lockLeft)
  end
end
out[#out + 1] = msText(now)
return out
