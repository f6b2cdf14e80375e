--[[
  Compares each request with what its key holds, the stored job first. A fingerprint without a
  job or result is a claim whose job is not added yet: it is held only briefly (ARGV[2]), so one
  whose job was never added (a crash between) frees the key soon; while the job exists its
  envelope decides, and its terminal result (ResultsStore) or a replay keeps the fingerprint the
  full TTL, for as long as the result is kept.

  Input:
    KEYS[k + 1] per entry i, from k = 5(i - 1): its fingerprint
    KEYS[k + 2] its job hash
    KEYS[k + 3] its result marker
    KEYS[k + 4] the fingerprint as an earlier release kept it (without the account: read, never
      written)
    KEYS[k + 5] the marker as an earlier release kept it

    ARGV[1] `claim` or `check` (reads only)
    ARGV[2] how long a new claim is held before its job exists (ms)
    ARGV[3] the full TTL (ms)
    ARGV[4] `1`: store nothing if one definitely differs
    ARGV[4 + i] per entry i: its fingerprint

  Output:
    {1 if the new ones were stored else 0, per entry}; per entry: {0} new, {1} replayed,
    {2} different, {3, data} the job exists but its stored fingerprint is missing or another one
    (kept before this check, or outlived): the caller compares the job's own envelope,
    {4} pending.
]]
local claim, hold, full, strict = ARGV[1] == 'claim', ARGV[2], ARGV[3], ARGV[4] == '1'
local out, pending, fresh = {}, {}, {}
local refused = false
for i = 1, #KEYS / 5 do
  local k, mine = 5 * (i - 1), ARGV[4 + i]
  local fk, jk, mk = KEYS[k + 1], KEYS[k + 2], KEYS[k + 3]
  local held = redis.call('GET', fk) or redis.call('GET', KEYS[k + 4])
  if held == false then held = pending[fk] end
  if redis.call('EXISTS', jk) == 1 then
    if held == mine then
      out[i] = {1}
      if claim then redis.call('SET', fk, mine, 'PX', full) end
    else
      out[i] = {3, redis.call('HGET', jk, JOB_DATA_FIELD) or ''}
    end
  elseif redis.call('EXISTS', mk, KEYS[k + 5]) > 0 then
    if held == nil or held == mine then
      out[i] = {1}
      if claim then redis.call('SET', fk, mine, 'PX', full) end
    else
      out[i] = {2}; refused = true
    end
  elseif held == nil then
    out[i] = {0}; pending[fk] = mine; fresh[#fresh + 1] = i
  elseif held == mine then
    out[i] = {4}
  else
    out[i] = {2}; refused = true
  end
end
local stored = 0
if claim and not (strict and refused) then
  for _, i in ipairs(fresh) do redis.call('SET', KEYS[5 * i - 4], ARGV[4 + i], 'PX', hold) end
  stored = 1
end
return {stored, out}
