import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { Redis } from "ioredis";

export interface PrivateRedis {
  readonly url: string;
  /** Stops the server and removes its directory. Safe to call twice. */
  stop(): Promise<void>;
}

/** The path of `name` on `pathVar` (a PATH value), if it is there. */
export function findOnPath(name: string, pathVar: string | undefined): string | undefined {
  for (const dir of (pathVar ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/**
 * A redis-server of this process's own, on a free loopback port in a temporary directory,
 * keeping nothing on disk unless `settings` say so. It stops with `stop()`.
 */
export async function startPrivateRedis(
  binary: string,
  settings: readonly string[] = [],
): Promise<PrivateRedis> {
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
  const exited = new Promise<never>((_, reject) => {
    child.once("exit", (code) => reject(new Error(`redis-server exited with code ${code}`)));
    // ENOENT when the binary is not installed.
    child.once("error", reject);
  });
  exited.catch(() => undefined);
  try {
    await Promise.race([waitForPing(url), exited]);
  } catch (error) {
    child.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  let stopping: Promise<void> | undefined;
  return {
    url,
    stop() {
      stopping ??= (async () => {
        if (child.exitCode === null) {
          const gone = new Promise((resolve) => child.once("exit", resolve));
          child.kill("SIGTERM");
          await gone;
        }
        await rm(dir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}

/** Connects to `url` and pings it once; rejects when it does not answer. */
export async function pingRedis(url: string, timeoutMs = 2_000): Promise<void> {
  const client = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: timeoutMs,
    retryStrategy: () => null,
  });
  // The rejected connect() below reports the failure; the event would only repeat it.
  client.on("error", () => {});
  try {
    await client.connect();
    await client.ping();
  } finally {
    client.disconnect();
  }
}

async function waitForPing(url: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await pingRedis(url);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

export function freePort(): Promise<number> {
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
