--[[
  Holds a currency's lane of an account for insufficient funds, with the refused job first in
  its held jobs (score 0): the rate gate sends nothing of that currency meanwhile.

  Input:
    KEYS[1] the account's lane holds (hash)
    KEYS[2] its held jobs (zset)

    ARGV[1] currency
    ARGV[2] the refused job's id
    ARGV[3] until when (ms on Redis's clock; 0: until an operator resumes the lane)

  Output:
    1 when this began the hold (none was in force), else 0.
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local current = redis.call('HGET', KEYS[1], ARGV[1])
local began = 1
if current then
  local untilMs = tonumber(string.match(current, '|(%d+)$') or '0')
  if untilMs == 0 or untilMs > now then began = 0 end
end
local untilMs = tonumber(ARGV[3])
if untilMs > 0 then untilMs = now + untilMs end
redis.call('HSET', KEYS[1], ARGV[1], 'insufficient_funds|' .. string.format('%d', untilMs))
redis.call('ZADD', KEYS[2], 0, 'insufficient_funds|' .. ARGV[1] .. '|' .. ARGV[2])
return began
