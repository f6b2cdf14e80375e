import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { Redis } from "ioredis";

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
  const dir = await mkdtemp(join(tmpdir(), "moneyq-redis-"));
  const port = await freePort();
  const child = spawn(
    binary,
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--dir",
      dir,
      ...settings,
    ],
    { stdio: "ignore" },
  );
  const url = `redis://127.0.0.1:${port}`;
  const exited = new Promise<never>((_, reject) =>
    child.once("exit", (code) => reject(new Error(`redis-server exited with code ${code}`))),
  );
  try {
    await Promise.race([waitForPing(url), exited]);
  } catch (error) {
    child.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url,
    source: "redis-server",
    stop: async () => {
      const gone = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await gone;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Connects to `url` and pings it once; rejects when it does not answer. */
export async function ping(url: string): Promise<void> {
  const client = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  // The rejected connect() below reports the failure; the event would only repeat it.
  client.on("error", () => {});
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    throw new Error(
      `REDIS_URL is set but Redis does not answer there: ${(error as Error).message}`,
    );
  } finally {
    client.disconnect();
  }
}

async function waitForPing(url: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await ping(url);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === "object") resolve(address.port);
        else reject(new Error("no port"));
      });
    });
  });
}

function findOnPath(name: string, pathVar: string | undefined): string | undefined {
  for (const dir of (pathVar ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}
