import { defineConfig } from "vitest/config";
import { SCENARIO_FILES } from "./test/setup/scenarios.js";

/** The long scenarios alone (`npm run test:scenarios`); `npm test` runs every other test file. */
export default defineConfig({
  test: {
    include: [...SCENARIO_FILES],
    globalSetup: ["test/setup/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // As `npm test`: rates measured at the sandbox would be distorted by files competing for
    // the two cores.
    fileParallelism: false,
  },
});
