import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { Redis } from "ioredis";
import { clusterTargetOf, isClusterUrl, nodeUrl } from "../net/redis-url.js";

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
        // A server killed by a signal has no exit code, only its signal: it is gone too.
        if (child.exitCode === null && child.signalCode === null) {
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

/**
 * Connects to `url` and pings it once; rejects when it does not answer within `timeoutMs`
 * (with the last error the connection reported, such as LOADING, when there was one).
 */
export async function pingRedis(url: string, timeoutMs = 2_000): Promise<void> {
  if (isClusterUrl(url)) return pingClusterNode(url, timeoutMs);
  const client = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: timeoutMs,
    retryStrategy: () => null,
    // The PING below is the check, and it reports LOADING as such (a ready check would wait).
    enableReadyCheck: false,
  });
  let last: Error | undefined;
  client.on("error", (error: Error) => {
    last = error;
  });
  const attempt = (async () => {
    await client.connect();
    await client.ping();
  })();
  // Settled later, after the timeout below, it must not be an unhandled rejection.
  attempt.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          last ?? Object.assign(new Error(`no answer in ${timeoutMs} ms`), { code: "ETIMEDOUT" }),
        ),
      timeoutMs,
    );
  });
  try {
    // "Connection is closed" says less than the error the connection reported (ECONNREFUSED).
    await Promise.race([
      attempt.catch((error: unknown) => {
        throw last ?? error;
      }),
      timedOut,
    ]);
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
}

/** Pings a cluster's seed nodes in turn; one that answers is enough (it knows the others). */
async function pingClusterNode(url: string, timeoutMs: number): Promise<void> {
  const target = clusterTargetOf(url);
  let last: unknown;
  for (const node of target.nodes) {
    try {
      return await pingRedis(nodeUrl(target, node), timeoutMs);
    } catch (error) {
      last = error;
    }
  }
  throw last;
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
