import { JOB_FIELDS } from "../bullmq-internals.js";
import type { Script } from "./script.js";

/**
 * Compares each request with what its key holds, the stored job first.
 * KEYS: per entry its fingerprint, job hash, result marker, and the fingerprint and marker as
 * an earlier release kept them (without the account: read, never written).
 * ARGV: 1 `claim` or `check` (reads only), 2 how long a new claim is held before its job exists
 * (ms), 3 the full TTL (ms), 4 `1`: store nothing if one definitely differs, 5.. the
 * fingerprints.
 * Answers {1 if the new ones were stored else 0, per entry}; per entry: {0} new, {1} replayed,
 * {2} different, {3, data} the job exists but its stored fingerprint is missing or another one
 * (kept before this check, or outlived): the caller compares the job's own envelope,
 * {4} pending.
 * A fingerprint without a job or result is a claim whose job is not added yet: it is held only
 * briefly (ARGV[2]), so one whose job was never added (a crash between) frees the key soon;
 * while the job exists its envelope decides, and its terminal result (ResultsStore) or a
 * replay keeps the fingerprint the full TTL, for as long as the result is kept.
 */
export const CLAIM_FINGERPRINTS: Script = {
  name: "moneyqClaimFingerprints",
  lua: `
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
      out[i] = {3, redis.call('HGET', jk, '${JOB_FIELDS.data}') or ''}
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
return {stored, out}`,
};
