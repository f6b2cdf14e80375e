import { pingRedis, startPrivateRedis } from "./private-redis.js";

/** Neither the configured Redis nor a private redis-server could be had. */
export class RedisUnavailableError extends Error {
  readonly code = "redis_unavailable";
  constructor(url: string, reason: string) {
    super(
      `Redis does not answer at ${redactUrl(url)} (${reason}) and no redis-server is installed ` +
        "to start a private one. Install Redis (Debian/Ubuntu: apt-get install redis-server; " +
        "macOS: brew install redis) or set REDIS_URL to a running Redis.",
    );
    this.name = "RedisUnavailableError";
  }
}

export interface ServiceRedis {
  readonly url: string;
  /** Why moneyq started its own redis-server; undefined when the configured Redis answered. */
  readonly embeddedBecause: string | undefined;
  stop(): Promise<void>;
}

/** Hides the password of a redis:// URL. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, "//***@");
}

/**
 * The Redis of a service: the configured one when it answers, else a private redis-server
 * on a free port in a temporary directory (jobs then live only as long as the process).
 */
export async function serviceRedis(url: string, binary = "redis-server"): Promise<ServiceRedis> {
  try {
    await pingRedis(url);
    return { url, embeddedBecause: undefined, stop: async () => undefined };
  } catch (error) {
    const reason = (error as Error).message;
    try {
      const server = await startPrivateRedis(binary);
      return { url: server.url, embeddedBecause: reason, stop: () => server.stop() };
    } catch {
      throw new RedisUnavailableError(url, reason);
    }
  }
}
