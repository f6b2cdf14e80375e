import { describe, expect, inject, it } from "vitest";
import { useTestRedis } from "../helpers/redis.js";
import { NO_REDIS_MESSAGE, ping, resolveRedis } from "./resolve-redis.js";

describe("resolveRedis", () => {
  it("uses REDIS_URL first", async () => {
    const url = inject("redisUrl");
    const found = await resolveRedis({ env: { REDIS_URL: url, PATH: process.env.PATH } });
    expect(found).toMatchObject({ url, source: "REDIS_URL" });
  });

  it("says so when REDIS_URL does not answer", async () => {
    await expect(resolveRedis({ env: { REDIS_URL: "redis://127.0.0.1:1" } })).rejects.toThrow(
      /REDIS_URL is set but Redis does not answer/,
    );
  });

  it("starts a private redis-server on a free port when there is no REDIS_URL and no Docker", async () => {
    const found = await resolveRedis({ env: { PATH: process.env.PATH }, tryDocker: false });
    expect(found.source).toBe("redis-server");
    expect(found.url).not.toBe(inject("redisUrl"));
    await expect(ping(found.url)).resolves.toBeUndefined();
    await found.stop();
    await expect(ping(found.url)).rejects.toThrow();
  });

  it("fails with one message saying what to install when nothing is found", async () => {
    await expect(resolveRedis({ env: { PATH: "/nonexistent" }, tryDocker: false })).rejects.toThrow(
      NO_REDIS_MESSAGE,
    );
  });
});

describe("useTestRedis", () => {
  const redis = useTestRedis("setup");

  it("gives each file its own prefix and deletes everything under it", async () => {
    const other = `x${redis.prefix}:outside`;
    const conn = redis.connect();
    await conn.set(`${redis.prefix}:a`, "1");
    await conn.hset(`${redis.prefix}:b`, "f", "v");
    await conn.set(other, "kept");
    expect((await redis.keys()).sort()).toEqual([`${redis.prefix}:a`, `${redis.prefix}:b`]);
    await redis.clean();
    expect(await redis.keys()).toEqual([]);
    expect(await conn.get(other)).toBe("kept");
    await conn.del(other);
  });
});
