import { lockHeld, MS_TEXT, recordSent } from "./fragments.js";
import type { Script } from "./script.js";

/**
 * Clearance of a request whose slot was reserved ahead, sent so that its answer comes back as
 * the slot begins: the same checks again (a 429 or a lost lock may have come since), its
 * lateness on Redis's clock, and, for a bulk slot, that no lookup or urgent request took it
 * meanwhile.
 * KEYS: 1 the account's pause, 2 its operator pause, 3 bulk slots reserved ahead; per request i:
 * 3 + 2i - 1 the job's lock, 3 + 2i the job's hash.
 * ARGV: 1 tolerance; per request, from 2 + 4(i - 1): slot time, lock token, sent
 * flag (clearance sets the job hash's "sent" field: the record lives as long as the job, and
 * goes with it), bulk flag.
 * Answers two values a request: status, value; then, last, Redis's time as the script read it.
 * Status: 1 clear (and recorded as sent), 3 paused (value: ms), 4 held, 5 lock lost, 8 late,
 * 9 taken by a lookup or urgent request.
 */
export const CLEAR_SLOTS: Script = {
  name: "moneyqClearSlots",
  lua: `${MS_TEXT}
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
  if token ~= '' and not ${lockHeld("KEYS[k]", "token")} then
    answer(5, 0)
  elseif not mine then
    answer(9, 0)
  elseif held then
    answer(4, 0)
  elseif pausedMs > 0 then
    answer(3, pausedMs)
  elseif now - at > tolerance then
    answer(8, 0)
  else
    if ARGV[a + 2] == '1' and (token == '' or redis.call('EXISTS', KEYS[k + 1]) == 1) then
      ${recordSent("KEYS[k + 1]", "tostring(now)")}
    end
    answer(1, 0)
  end
end
out[#out + 1] = msText(now)
return out`,
};
