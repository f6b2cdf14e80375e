import { configDefaults, defineConfig } from "vitest/config";
import { listedOrder } from "./test/setup/listed-order.js";
import { PARALLEL_FILES } from "./test/setup/parallel-files.js";
import { SCENARIO_FILES } from "./test/setup/scenarios.js";
import { twoGroups } from "./test/setup/two-groups.js";

// The deployment tests need Prometheus, promtool and docker-compose (`npm run test:deploy`);
// the browser tests, Chromium (`npm run test:browser`); the cluster tests, a local Redis
// Cluster (`npm run test:cluster`); the image tests, podman (`npm run test:image`); the long
// scenarios run under `npm run test:scenarios`.
const ELSEWHERE = [
  ...configDefaults.exclude,
  "test/deploy/**",
  "test/browser/**",
  "test/cluster/**",
  "test/image/**",
  ...SCENARIO_FILES,
];

export default defineConfig({
  test: {
    globalSetup: ["test/setup/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    sequence: { sequencer: listedOrder(PARALLEL_FILES) },
    // Pipeline tests measure rates at the sandbox; files competing for the two cores would
    // distort those measurements, so every file but those listed in PARALLEL_FILES runs alone,
    // after the listed ones have run two at a time.
    projects: twoGroups(
      { name: "parallel", include: [...PARALLEL_FILES], exclude: ELSEWHERE },
      {
        name: "alone",
        include: ["test/**/*.test.ts"],
        exclude: [...ELSEWHERE, ...PARALLEL_FILES],
      },
    ),
  },
});
