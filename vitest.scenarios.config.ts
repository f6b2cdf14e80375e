import { defineConfig } from "vitest/config";
import { listedOrder } from "./test/setup/listed-order.js";
import { TIMED_SCENARIOS, WAITING_SCENARIOS } from "./test/setup/scenarios.js";
import { twoGroups } from "./test/setup/two-groups.js";

/**
 * The long scenarios alone (`npm run test:scenarios`); `npm test` runs every other test file.
 * Those that mostly wait run two at a time; then those that measure rates or latencies at the
 * sandbox run one at a time, as `npm test` runs its files: another file competing for the two
 * cores would distort what they measure.
 */
export default defineConfig({
  test: {
    globalSetup: ["test/setup/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    sequence: { sequencer: listedOrder(WAITING_SCENARIOS) },
    projects: twoGroups(
      { name: "waiting", include: [...WAITING_SCENARIOS] },
      { name: "timed", include: [...TIMED_SCENARIOS] },
    ),
  },
});
