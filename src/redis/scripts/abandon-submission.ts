import { BATCH_EVENT, BATCH_TOTALS } from "./fragments.js";
import type { Script } from "./script.js";

/**
 * Cancels a batch whose submission was abandoned: still validating, with a `sealBy` passed on
 * Redis's clock, and no submission holding its lease. Reason `submission_abandoned`, with its
 * `batch.cancelled` event. Its jobs were never sent: the rate gate held every one of them.
 * KEYS: 1 the batch's meta, 2 its submission lease, 3 the results stream.
 * ARGV: 1 now (ISO time), 2 the stream's length.
 * Answers `abandoned`; or why not: `missing`, `sealed` (past validation, or from a release that
 * kept no `sealBy`), `live` (a submission holds it), `not_due` (its `sealBy` is ahead).
 */
export const ABANDON_SUBMISSION: Script = {
  name: "moneyqAbandonSubmission",
  numberOfKeys: 3,
  lua: `${BATCH_TOTALS}${BATCH_EVENT}
local m = redis.call('HMGET', KEYS[1], 'state', 'sealBy')
if not m[1] then return 'missing' end
if m[1] ~= 'validating' or not m[2] then return 'sealed' end
if redis.call('EXISTS', KEYS[2]) == 1 then return 'live' end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
if now <= tonumber(m[2]) then return 'not_due' end
redis.call('HSET', KEYS[1], 'state', 'cancelled', 'cancelledAt', ARGV[1],
  'cancelReason', 'submission_abandoned')
batchEvent(KEYS[3], ARGV[2], KEYS[1], 'batch.cancelled', ARGV[1])
return 'abandoned'`,
};
