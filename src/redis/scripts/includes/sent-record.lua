--[[
  A job's "sent" record, the field SENT_FIELD of its hash: `sentRecorded(jobKey)` is true when
  the job's request is recorded as sent; `recordSent(jobKey, at)` records it, at `at`;
  `dropSent(jobKey)` drops it (a request proved never sent).
]]
-- luacheck: push ignore 211 (a script includes the file for the functions it calls)
local function sentRecorded(jobKey)
  return redis.call('HEXISTS', jobKey, SENT_FIELD) == 1
end
local function recordSent(jobKey, at)
  redis.call('HSET', jobKey, SENT_FIELD, at)
end
local function dropSent(jobKey)
  redis.call('HDEL', jobKey, SENT_FIELD)
end
-- luacheck: pop
