import { lockHeld } from "./fragments.js";
import type { Script } from "./script.js";

/**
 * Extends a lease if its holder still holds it.
 * KEYS: 1 the lease.
 * ARGV: 1 the holder's token, 2 the new length in ms.
 * Answers 1 when extended, 0 when the token no longer holds it.
 */
export const RENEW_LEASE: Script = {
  name: "moneyqRenewLease",
  numberOfKeys: 1,
  lua: `
if ${lockHeld("KEYS[1]", "ARGV[1]")} then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`,
};
