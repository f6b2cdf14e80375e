import { lockHeld } from "./fragments.js";
import type { Script } from "./script.js";

/**
 * Releases a lock or lease only if its holder still holds it, so a holder whose lock lapsed and
 * was taken by another never frees the other's.
 * KEYS: 1 the lock.
 * ARGV: 1 the holder's token.
 * Answers 1 when deleted, 0 when the token did not hold it.
 */
export const DELETE_IF_HELD: Script = {
  name: "moneyqDeleteIfHeld",
  numberOfKeys: 1,
  lua: `
if ${lockHeld("KEYS[1]", "ARGV[1]")} then return redis.call('DEL', KEYS[1]) end
return 0`,
};
