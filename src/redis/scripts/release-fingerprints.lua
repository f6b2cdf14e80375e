--[[
  Gives claims back: deletes each fingerprint that still holds the claim's.

  Input:
    KEYS[i] the fingerprints

    ARGV[i] the fingerprint each claim stored, in the same order

  Output:
    1.
]]
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[i] then redis.call('DEL', KEYS[i]) end
end
return 1
