import type { Script } from "./script.js";

/**
 * Gives claims back: deletes each fingerprint that still holds the claim's.
 * KEYS: the fingerprints.
 * ARGV: the fingerprint each claim stored, in the same order.
 * Answers 1.
 */
export const RELEASE_FINGERPRINTS: Script = {
  name: "moneyqReleaseFingerprints",
  lua: `
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[i] then redis.call('DEL', KEYS[i]) end
end
return 1`,
};
