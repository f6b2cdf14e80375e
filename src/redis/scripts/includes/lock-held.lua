--[[
  lockHeld(key, token): true while `token` holds the lock or lease `key` (a lapsed one, or
  another's, is not held).
]]
local function lockHeld(key, token)
  return redis.call('GET', key) == token
end
