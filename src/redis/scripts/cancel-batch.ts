import { BATCH_EVENT, BATCH_TOTALS, CANCELLABLE } from "./fragments.js";
import type { Script } from "./script.js";

/**
 * Marks a batch cancelled (with `cancelledAt`) if it is in a cancellable state, and appends
 * its `batch.cancelled` event.
 * KEYS: 1 the batch's meta, 2 the results stream.
 * ARGV: 1 now (ISO time), 2 the stream's length.
 * Answers the state the batch had before (nil when it does not exist).
 */
export const CANCEL_BATCH: Script = {
  name: "moneyqCancelBatch",
  numberOfKeys: 2,
  lua: `${CANCELLABLE}${BATCH_TOTALS}${BATCH_EVENT}
local state = redis.call('HGET', KEYS[1], 'state')
if cancellable(state) then
  redis.call('HSET', KEYS[1], 'state', 'cancelled', 'cancelledAt', ARGV[1], 'cancelReason', 'cancelled')
  batchEvent(KEYS[2], ARGV[2], KEYS[1], 'batch.cancelled', ARGV[1])
end
return state`,
};
