import type { TestProject } from "vitest/node";
import { startLocalCluster } from "../helpers/redis-cluster.js";
import { ensureBuild } from "./ensure-build.js";

/**
 * Starts a real Redis Cluster (three masters, a replica each, from the machine's
 * redis-server) and hands its `redis+cluster://` URL to every test file as `redisUrl`, so the
 * suites listed in vitest.cluster.config.ts run unchanged against it.
 */
export default async function setup(project: TestProject) {
  await ensureBuild();
  const cluster = await startLocalCluster();
  console.log(`tests use a local Redis Cluster: ${cluster.url}`);
  project.provide("redisUrl", cluster.url);
  return () => cluster.stop();
}
