import type { TestProject } from "vitest/node";
import { ensureBuild } from "./ensure-build.js";
import { resolveRedis } from "./resolve-redis.js";

declare module "vitest" {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

/** Builds dist/ if stale, finds one Redis for the whole run and hands its URL to every test file. */
export default async function setup(project: TestProject) {
  // The project's own Node (package.json's `node` development dependency), as npm scripts run it.
  console.log(`tests run on Node ${process.version}`);
  await ensureBuild();
  const redis = await resolveRedis({ env: process.env });
  console.log(`tests use Redis from ${redis.source}: ${redis.url}`);
  project.provide("redisUrl", redis.url);
  return async () => {
    await redis.stop();
  };
}
