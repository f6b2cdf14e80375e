--[[
  cancellable(state): whether a batch in `state` can be cancelled (CANCELLABLE_BATCH_STATES,
  a set: its jobs may not all have been sent).
]]
local function cancellable(state)
  return CANCELLABLE_BATCH_STATES[state] == true
end
