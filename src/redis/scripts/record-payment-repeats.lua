--[[
  Records enqueued payments under their payment fingerprint, each once (a job enqueued again
  under its key keeps its first record); drops the fingerprint's records older than the window,
  and the oldest beyond `cap`; sets both keys to expire a window after the newest record.

  Input:
    KEYS[2i - 1] per payment i: its fingerprint's records (keys.ts paymentRepeatKeys)
    KEYS[2i] its fingerprint's times

    ARGV[1] now (ms)
    ARGV[2] the window (ms)
    ARGV[3] the cap
    ARGV[2i + 2] per payment i: its job id
    ARGV[2i + 3] its record (JSON)

  Output:
    The number of records written.
]]
local now, window, cap = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local written = 0
for i = 1, #KEYS / 2 do
  local records, times = KEYS[2 * i - 1], KEYS[2 * i]
  local jobId = ARGV[2 * i + 2]
  if redis.call('HSETNX', records, jobId, ARGV[2 * i + 3]) == 1 then
    written = written + 1
    redis.call('ZADD', times, now, jobId)
  end
  local gone = redis.call('ZRANGEBYSCORE', times, '-inf', '(' .. (now - window))
  local over = redis.call('ZCARD', times) - #gone - cap
  if over > 0 then
    for _, id in ipairs(redis.call('ZRANGE', times, #gone, #gone + over - 1)) do gone[#gone + 1] = id end
  end
  if #gone > 0 then
    redis.call('HDEL', records, unpack(gone))
    redis.call('ZREM', times, unpack(gone))
  end
  redis.call('PEXPIRE', records, window)
  redis.call('PEXPIRE', times, window)
end
return written
