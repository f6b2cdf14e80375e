import type { Script } from "./script.js";

/**
 * Records enqueued payments under their payment fingerprint, each once (a job enqueued again
 * under its key keeps its first record), drops the fingerprint's records older than the window
 * when it holds several, and sets the fingerprint to expire a window after its newest record.
 * KEYS: payment i's fingerprint key (keys.ts paymentRepeatKey).
 * ARGV: 1 now (ms), 2 the window (ms); payment i has ARGV[2i+1..2i+2]: its job id, its record
 * (JSON with `at`, ms).
 * Answers the number of records written.
 */
export const RECORD_PAYMENT_REPEATS: Script = {
  name: "moneyqRecordPaymentRepeats",
  lua: `
local now, window = tonumber(ARGV[1]), tonumber(ARGV[2])
local written = 0
for i = 1, #KEYS do
  local key = KEYS[i]
  written = written + redis.call('HSETNX', key, ARGV[2 * i + 1], ARGV[2 * i + 2])
  if redis.call('HLEN', key) > 1 then
    local all = redis.call('HGETALL', key)
    for j = 1, #all, 2 do
      local ok, entry = pcall(cjson.decode, all[j + 1])
      if not ok or tonumber(entry.at or 0) < now - window then redis.call('HDEL', key, all[j]) end
    end
  end
  redis.call('PEXPIRE', key, window)
end
return written`,
};
