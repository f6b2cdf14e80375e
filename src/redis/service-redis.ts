import { awaitRedis } from "./await-redis.js";
import { startPrivateRedis } from "./private-redis.js";
import { type RedisSource, RedisUnavailableError } from "./unavailable-error.js";

export interface ServiceRedis {
  readonly url: string;
  /** Why moneyq started its own redis-server; undefined when the configured Redis answered. */
  readonly embeddedBecause: string | undefined;
  stop(): Promise<void>;
}

/**
 * The Redis of a service: the one at `url` when it answers. Only when `source` is "embedded"
 * (development: no REDIS_URL, no PAYMENTS_API_URL) does a private redis-server on a free port
 * in a temporary directory stand in for it (jobs then live only as long as the process);
 * otherwise a Redis that does not answer within `startTimeoutMs` stops the start, naming where
 * it was looked for and whether it refused, timed out or was still loading.
 */
export async function serviceRedis(
  url: string,
  binary = "redis-server",
  source: RedisSource = "embedded",
  startTimeoutMs = 0,
): Promise<ServiceRedis> {
  try {
    // A configured Redis may still be starting (refusing, or LOADING): wait for it. In the
    // development mode one attempt decides, as a private redis-server can stand in.
    await awaitRedis(url, source === "embedded" ? 0 : startTimeoutMs);
    return { url, embeddedBecause: undefined, stop: async () => undefined };
  } catch (error) {
    const reason = (error as Error).message;
    if (source !== "embedded") throw new RedisUnavailableError(url, reason, source);
    try {
      const server = await startPrivateRedis(binary);
      return { url: server.url, embeddedBecause: reason, stop: () => server.stop() };
    } catch {
      throw new RedisUnavailableError(url, reason);
    }
  }
}

/** Where a service's Redis comes from, by configuration (see serviceRedis). */
export function redisSource(config: {
  readonly redisUrlSet: boolean;
  readonly paymentsApiUrl: string | undefined;
  readonly requireSafeRedis: boolean;
}): RedisSource {
  if (config.redisUrlSet) return "REDIS_URL";
  if (config.paymentsApiUrl !== undefined) return "default";
  return config.requireSafeRedis ? "require-safe" : "embedded";
}
