--[[
  Starts a submission, atomically, so that of concurrent submissions of one batch exactly one
  enqueues it. A batch written before digests were kept has none: it is taken to be the same
  file. A new batch enters its account's index of batches in the same step, so every batch
  that exists is listed, and its account's index of unsealed batches, where the sweep of
  abandoned submissions finds it. It gets `sealBy` (Redis's clock, ms): until its submission
  seals it, the rate gate holds its jobs, and past `sealBy` with no submission holding it, it is
  cancelled. A resumed submission moves `sealBy` on, unless the batch has none (an earlier
  release submitted it and did not hold its jobs: it is resumed as before).

  Input:
    KEYS[1] the batch's meta
    KEYS[2] its submission lease
    KEYS[3] the account's batch index
    KEYS[4] the account's unsealed batches

    ARGV[1] a token
    ARGV[2] the lease in ms
    ARGV[3] the file's digest
    ARGV[4] the batch id
    ARGV[5] its creation time (ms)
    ARGV[6...] the meta's fields and values

  Output:
    `reused` (the batch holds another file), `submitted` (the batch is past validation),
    `busy` (another submission holds it), `created` (the meta was written) or `resumed` (a
    submission that stopped while validating is taken over).
]]
local m = redis.call('HMGET', KEYS[1], 'state', 'digest', 'sealBy')
local state, digest = m[1], m[2]
if state and digest and digest ~= ARGV[3] then return 'reused' end
if state and state ~= 'validating' then return 'submitted' end
if not redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return 'busy' end
local t = redis.call('TIME')
local sealBy = tostring(tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[2]))
if state then
  if m[3] then redis.call('HSET', KEYS[1], 'sealBy', sealBy) end
  return 'resumed'
end
redis.call('HSET', KEYS[1], 'sealBy', sealBy, unpack(ARGV, 6))
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[4])
redis.call('ZADD', KEYS[4], ARGV[5], ARGV[4])
return 'created'
