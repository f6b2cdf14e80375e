import type { Cluster, Redis } from "ioredis";
import type { RedisConnection } from "./connection.js";

export interface RedisSafety {
  readonly safe: boolean;
  /** Each risk, named: what could happen to jobs. */
  readonly warnings: readonly string[];
}

/**
 * Reads the settings that decide whether Redis can lose jobs: of each master on a cluster,
 * each warning then naming its node.
 */
export async function checkRedisSafety(redis: RedisConnection): Promise<RedisSafety> {
  if (!redis.isCluster) return checkNode(redis as Redis);
  const warnings: string[] = [];
  for (const node of (redis as Cluster).nodes("master")) {
    const found = await checkNode(node);
    const at = `${node.options.host}:${node.options.port}`;
    warnings.push(...found.warnings.map((warning) => `node ${at}: ${warning}`));
  }
  return { safe: warnings.length === 0, warnings };
}

async function checkNode(redis: Redis): Promise<RedisSafety> {
  const warnings: string[] = [];
  let policy: string | undefined;
  let appendonly: string | undefined;
  let save: string | undefined;
  try {
    policy = ((await redis.config("GET", "maxmemory-policy")) as string[])[1];
    appendonly = ((await redis.config("GET", "appendonly")) as string[])[1];
    save = ((await redis.config("GET", "save")) as string[])[1];
  } catch {
    return {
      safe: false,
      warnings: [
        "could not read Redis settings (CONFIG GET refused): cannot confirm that jobs are safe",
      ],
    };
  }
  if (policy !== "noeviction") {
    warnings.push(
      `maxmemory-policy is ${policy}: under memory pressure Redis may evict job keys and jobs can be lost; set it to noeviction`,
    );
  }
  if (appendonly !== "yes" && (save === undefined || save.trim() === "")) {
    warnings.push(
      "Redis persists nothing (appendonly no, no save points): a Redis restart loses every queued job; enable appendonly",
    );
  }
  return { safe: warnings.length === 0, warnings };
}
