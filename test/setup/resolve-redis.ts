import { findOnPath, pingRedis, startPrivateRedis } from "../../src/redis/private-redis.js";

export interface ResolvedRedis {
  readonly url: string;
  /** Where it came from, for the one log line the setup prints. */
  readonly source: "REDIS_URL" | "testcontainers" | "redis-server";
  readonly stop: () => Promise<void>;
}

export const NO_REDIS_MESSAGE =
  "moneyq tests need a real Redis and found none: set REDIS_URL=redis://host:port, " +
  "or start a Docker engine (testcontainers), or install redis-server " +
  "(Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis).";

export interface ResolveOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Skips the Docker probe (tests of the fallback order use it). */
  readonly tryDocker?: boolean;
  readonly redisServerBinary?: string;
}

/** Finds a Redis for the test run, in the documented order. */
export async function resolveRedis(options: ResolveOptions): Promise<ResolvedRedis> {
  const fromEnv = options.env.REDIS_URL;
  if (fromEnv) {
    await ping(fromEnv);
    return { url: fromEnv, source: "REDIS_URL", stop: async () => {} };
  }
  if (options.tryDocker !== false) {
    const container = await startContainer();
    if (container) return container;
  }
  const binary = options.redisServerBinary ?? findOnPath("redis-server", options.env.PATH);
  if (binary) return startPrivateServer(binary);
  throw new Error(NO_REDIS_MESSAGE);
}

async function startContainer(): Promise<ResolvedRedis | undefined> {
  try {
    const { getContainerRuntimeClient } = await import("testcontainers");
    await getContainerRuntimeClient();
  } catch {
    return undefined;
  }
  const { RedisContainer } = await import("@testcontainers/redis");
  const container = await new RedisContainer("redis:7-alpine").start();
  return {
    url: container.getConnectionUrl(),
    source: "testcontainers",
    stop: async () => {
      await container.stop();
    },
  };
}

/** A private redis-server on a free port in a temporary directory; `settings` override the defaults. */
export async function startPrivateServer(
  binary: string,
  settings: readonly string[] = [],
): Promise<ResolvedRedis> {
  const server = await startPrivateRedis(binary, settings);
  return { url: server.url, source: "redis-server", stop: () => server.stop() };
}

/** Connects to `url` and pings it once; rejects when it does not answer. */
export async function ping(url: string): Promise<void> {
  try {
    await pingRedis(url);
  } catch (error) {
    throw new Error(
      `REDIS_URL is set but Redis does not answer there: ${(error as Error).message}`,
    );
  }
}
