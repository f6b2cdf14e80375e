import { CANCELLABLE } from "./fragments.js";
import type { Script } from "./script.js";

/**
 * Marks a batch cancelled (with `cancelledAt`) if it is in a cancellable state.
 * KEYS: 1 the batch's meta.
 * ARGV: 1 now (ISO time).
 * Answers the state the batch had before (nil when it does not exist).
 */
export const CANCEL_BATCH: Script = {
  name: "moneyqCancelBatch",
  numberOfKeys: 1,
  lua: `${CANCELLABLE}
local state = redis.call('HGET', KEYS[1], 'state')
if cancellable(state) then
  redis.call('HSET', KEYS[1], 'state', 'cancelled', 'cancelledAt', ARGV[1])
end
return state`,
};
