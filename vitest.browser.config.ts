import { defineConfig } from "vitest/config";

/** The console's browser tests alone: they drive Debian's Chromium (`npm run test:browser`). */
export default defineConfig({
  test: {
    include: ["test/browser/**/*.test.ts"],
    globalSetup: ["test/setup/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
