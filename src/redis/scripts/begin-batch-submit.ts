import type { Script } from "./script.js";

/**
 * Starts a submission, atomically, so that of concurrent submissions of one batch exactly one
 * enqueues it. A batch written before digests were kept has none: it is taken to be the same
 * file. A new batch enters its account's index of batches in the same step, so every batch
 * that exists is listed.
 * KEYS: 1 the batch's meta, 2 its submission lease, 3 the account's batch index.
 * ARGV: 1 a token, 2 the lease in ms, 3 the file's digest, 4 the batch id, 5 its creation time
 * (ms), 6.. the meta's fields and values.
 * Answers `reused` (the batch holds another file), `submitted` (the batch is past validation), `busy`
 * (another submission holds it), `created` (the meta was written) or `resumed` (a submission
 * that stopped while validating is taken over).
 */
export const BEGIN_BATCH_SUBMIT: Script = {
  name: "moneyqBeginSubmit",
  numberOfKeys: 3,
  lua: `
local m = redis.call('HMGET', KEYS[1], 'state', 'digest')
local state, digest = m[1], m[2]
if state and digest and digest ~= ARGV[3] then return 'reused' end
if state and state ~= 'validating' then return 'submitted' end
if not redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return 'busy' end
if state then return 'resumed' end
redis.call('HSET', KEYS[1], unpack(ARGV, 6))
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[4])
return 'created'`,
};
