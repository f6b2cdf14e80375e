--[[
  The batch completion rule. `batchProgress(meta)` reads the meta's state and counters;
  `allFinished(m)`: every accepted row has its result; `finishedState(m)`: the state it then
  ends in, `completed` when every accepted row succeeded and no row was skipped, else
  `completed_with_failures`.
]]
-- luacheck: push ignore 211 (a script includes the file for the functions it calls)
local function batchProgress(meta)
  return redis.call('HMGET', meta, 'state', 'accepted', 'done', 'n:succeeded', 'skipped')
end
local function allFinished(m)
  return tonumber(m[3]) >= tonumber(m[2])
end
local function finishedState(m)
  local ok = tonumber(m[4]) == tonumber(m[2]) and tonumber(m[5]) == 0
  return ok and 'completed' or 'completed_with_failures'
end
-- luacheck: pop
