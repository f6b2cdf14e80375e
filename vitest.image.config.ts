import { defineConfig } from "vitest/config";

/**
 * The image tests alone (`npm run test:image`): the global setup makes the base images with
 * debootstrap and podman, builds the Dockerfile, and the tests run its containers and the
 * compose stack.
 */
export default defineConfig({
  test: {
    include: ["test/image/**/*.test.ts"],
    globalSetup: ["test/setup/global-setup.ts", "test/image/image-setup.ts"],
    testTimeout: 180_000,
    hookTimeout: 300_000,
    fileParallelism: false,
  },
});
