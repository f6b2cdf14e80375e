import { BATCH_COMPLETION, lockHeld } from "./fragments.js";
import type { Script } from "./script.js";

/**
 * Ends a batch's validation: queued, or finished already if every job has its result.
 * KEYS: 1 the batch's meta, 2 its submission lease.
 * ARGV: 1 now (ISO time), 2 the submission's token.
 * Answers `lost` (nothing changed) if the token no longer holds the lease; the state the batch
 * had if it was past validation; else its new state: `queued`, `completed` or
 * `completed_with_failures`.
 */
export const BATCH_QUEUED: Script = {
  name: "moneyqBatchQueued",
  numberOfKeys: 2,
  lua: `${BATCH_COMPLETION}
if not ${lockHeld("KEYS[2]", "ARGV[2]")} then return 'lost' end
local m = batchProgress(KEYS[1])
if m[1] ~= 'validating' then return m[1] end
if allFinished(m) then
  local state = finishedState(m)
  redis.call('HSET', KEYS[1], 'state', state, 'finishedAt', ARGV[1])
  return state
end
redis.call('HSET', KEYS[1], 'state', 'queued')
return 'queued'`,
};
