--[[
  Claims references for a batch, each unless another batch of the account holds it.

  Input:
    KEYS[1] the account's batch references

    ARGV[1] the batch id
    ARGV[2...] the references

  Output:
    The 1-based positions (in ARGV[2...]) of the references another batch holds.
]]
local taken = {}
for i = 1, #ARGV - 1 do
  local ok = redis.call('HSETNX', KEYS[1], ARGV[i + 1], ARGV[1])
  if ok == 0 and redis.call('HGET', KEYS[1], ARGV[i + 1]) ~= ARGV[1] then
    taken[#taken + 1] = i
  end
end
return taken
