import { pingRedis, startPrivateRedis } from "./private-redis.js";
import { RedisUnavailableError } from "./redis-unavailable-error.js";

export interface ServiceRedis {
  readonly url: string;
  /** Why moneyq started its own redis-server; undefined when the configured Redis answered. */
  readonly embeddedBecause: string | undefined;
  stop(): Promise<void>;
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
