import { type ChildProcess, spawn } from "node:child_process";
import { createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { freePort } from "../../src/redis/private-redis.js";
import { serviceRedis } from "../../src/redis/service-redis.js";
import { RedisUnavailableError } from "../../src/redis/unavailable-error.js";
import { exitOf } from "../helpers/cli.js";
import { installed } from "../helpers/installed.js";

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** A TCP server that answers every command as `reply` (or never, when undefined). */
async function fakeRedis(reply: string | undefined): Promise<number> {
  const server: Server = createServer((socket) => {
    // One reply per command (a chunk may hold several).
    socket.on("data", (chunk: Buffer) => {
      if (reply === undefined) return;
      for (const _ of chunk.toString().matchAll(/(?:^|\r\n)\*\d+\r\n/g)) socket.write(reply);
    });
    socket.on("error", () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const sockets = new Set<Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  cleanup.push(
    () =>
      new Promise<void>((r) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => r());
      }),
  );
  return (server.address() as { port: number }).port;
}

async function refusal(url: string, timeoutMs: number): Promise<Error> {
  return serviceRedis(url, "redis-server", "REDIS_URL", timeoutMs).then(
    async (r) => {
      await r.stop();
      return new Error("it answered");
    },
    (e: unknown) => e as Error,
  );
}

describe("a configured Redis that is still starting", () => {
  it("is waited for until MONEYQ_REDIS_START_TIMEOUT_MS, then used", async () => {
    const config = loadConfig({ MONEYQ_REDIS_START_TIMEOUT_MS: "15000" });
    expect(config.redisStartTimeoutMs).toBe(15_000);
    const port = await freePort();
    // Starts 1.5 s after the service began looking for it.
    let child: ChildProcess | undefined;
    const late = setTimeout(() => {
      child = spawn(
        installed("redis-server", "redis-server"),
        ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        { stdio: "ignore" },
      );
    }, 1_500);
    cleanup.push(async () => {
      clearTimeout(late);
      if (child) {
        child.kill("SIGTERM");
        await exitOf(child);
      }
    });
    const redis = await serviceRedis(
      `redis://127.0.0.1:${port}`,
      "redis-server",
      "REDIS_URL",
      config.redisStartTimeoutMs,
    );
    expect(redis).toMatchObject({ url: `redis://127.0.0.1:${port}`, embeddedBecause: undefined });
  }, 30_000);

  it("says it was refused", async () => {
    const error = await refusal(`redis://127.0.0.1:${await freePort()}`, 600);
    expect(error).toBeInstanceOf(RedisUnavailableError);
    expect(error.message).toMatch(/\(connection refused, after \d+ attempts in 600 ms\)/);
  }, 30_000);

  it("says it was still loading its data", async () => {
    const port = await fakeRedis("-LOADING Redis is loading the dataset in memory\r\n");
    const error = await refusal(`redis://127.0.0.1:${port}`, 600);
    expect(error).toBeInstanceOf(RedisUnavailableError);
    expect(error.message).toContain("still loading its data (LOADING)");
  }, 30_000);

  it("says it timed out", async () => {
    const port = await fakeRedis(undefined);
    const error = await refusal(`redis://127.0.0.1:${port}`, 600);
    expect(error).toBeInstanceOf(RedisUnavailableError);
    expect(error.message).toContain("connection timed out");
  }, 30_000);
});
