import { defineConfig } from "vitest/config";

/** The deployment tests alone: they run Prometheus, promtool and docker-compose. */
export default defineConfig({
  test: {
    include: ["test/deploy/**/*.test.ts"],
    globalSetup: ["test/setup/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    fileParallelism: false,
  },
});
