import type { Script } from "./script.js";

/**
 * Pauses an account until `ms` from now, unless it is paused longer already.
 * KEYS: 1 the account's pause.
 * ARGV: 1 ms.
 * Answers 1.
 */
export const PAUSE_ACCOUNT: Script = {
  name: "moneyqPauseAccount",
  numberOfKeys: 1,
  lua: `
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
end
return 1`,
};
