import { lockHeld } from "./fragments.js";
import type { Script } from "./script.js";

/**
 * Sets each row's report line unless it has one: a resumed submission keeps results already in.
 * KEYS: 1 the batch's rows, 2 its submission lease.
 * ARGV: 1 the submission's token; then pairs of row number and report line.
 * Answers 1, or 0 (nothing written) if the token no longer holds the lease.
 */
export const SET_BATCH_ROWS: Script = {
  name: "moneyqSetRows",
  numberOfKeys: 2,
  lua: `
if not ${lockHeld("KEYS[2]", "ARGV[1]")} then return 0 end
for i = 2, #ARGV, 2 do redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1]) end
return 1`,
};
