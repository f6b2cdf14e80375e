import { configDefaults, defineConfig } from "vitest/config";
import { SCENARIO_FILES } from "./test/setup/scenarios.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The deployment tests need Prometheus, promtool and docker-compose (`npm run test:deploy`);
    // the browser tests, Chromium (`npm run test:browser`); the cluster tests, a local Redis
    // Cluster (`npm run test:cluster`); the image tests, podman (`npm run test:image`); the long
    // scenarios run under `npm run test:scenarios`.
    exclude: [
      ...configDefaults.exclude,
      "test/deploy/**",
      "test/browser/**",
      "test/cluster/**",
      "test/image/**",
      ...SCENARIO_FILES,
    ],
    globalSetup: ["test/setup/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Pipeline tests measure rates at the sandbox; files competing for the two cores would
    // distort those measurements, so files run one at a time.
    fileParallelism: false,
  },
});
