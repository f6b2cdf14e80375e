import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { redisContext } from "../../src/redis/redis-context.js";
import * as catalogue from "../../src/redis/scripts/lua-scripts.js";

// Building a context connects to nothing: these connections never connect.
const first = new Redis({ lazyConnect: true });
const second = new Redis({ lazyConnect: true });
afterAll(() => {
  first.disconnect();
  second.disconnect();
});

describe("the Redis context of a connection", () => {
  it("is built once a connection and prefix: every part asking gets the same keyspace and waits", () => {
    const a = redisContext(first, "ctx-a");
    expect(redisContext(first, "ctx-a")).toBe(a);
    expect(redisContext(first, "ctx-a").replicas).toBe(a.replicas);
    expect(a.space.prefix).toBe("ctx-a");
    const otherPrefix = redisContext(first, "ctx-b");
    expect(otherPrefix).not.toBe(a);
    expect(otherPrefix.space.prefix).toBe("ctx-b");
    const otherConnection = redisContext(second, "ctx-a");
    expect(otherConnection).not.toBe(a);
    expect(otherConnection.replicas).not.toBe(a.replicas);
  });

  it("defines every script of the catalogue on its connection", () => {
    redisContext(first, "ctx-a");
    const names = Object.values(catalogue).map((s) => s.name);
    expect(names.length).toBeGreaterThanOrEqual(27);
    for (const name of names)
      expect(typeof (first as unknown as Record<string, unknown>)[name]).toBe("function");
  });
});
