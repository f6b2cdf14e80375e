import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.js";
import { createRedis } from "../../src/redis/connection.js";
import { type PrivateRedis, startPrivateRedis } from "../../src/redis/private-redis.js";
import { RedisDownError, redisTroubleOf } from "../../src/redis/refusals.js";
import { NotReplicatedError } from "../../src/redis/replica-waits.js";
import { RedisWriteCheck } from "../../src/redis/write-check.js";
import { installed } from "../helpers/installed.js";

/**
 * Redis's refusals as Redis 7 words them, met on a private redis-server (its configuration is
 * changed here: out of memory, too few replicas, a replica's read-only), and what each means.
 */
let server: PrivateRedis;
let primary: PrivateRedis;
let redis: Redis;

beforeAll(async () => {
  const binary = installed("redis-server", "redis-server");
  server = await startPrivateRedis(binary);
  primary = await startPrivateRedis(binary);
  redis = new Redis(server.url, { maxRetriesPerRequest: null });
});

afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
  await primary?.stop();
});

/** The error `run` rejects with while Redis is set up by `setting` (CONFIG SET name value). */
async function refusal(setting: [string, string], run: () => Promise<unknown>): Promise<unknown> {
  const [name, value] = setting;
  const before = ((await redis.config("GET", name)) as string[])[1] as string;
  await redis.config("SET", name, value);
  try {
    return await run().then(
      () => new Error("no refusal"),
      (error: unknown) => error,
    );
  } finally {
    await redis.config("SET", name, before);
  }
}

const WRITE_IN_SCRIPT = "redis.call('SET', KEYS[1], 'x') return 1";

describe("Redis trouble, from what Redis answered", () => {
  it("out of memory: a command, a script's write, and a transaction aborted for it", async () => {
    await redis.set("fill", "x".repeat(200_000));
    const oom: [string, string] = ["maxmemory", "1"];
    const answers = [
      await refusal(oom, () => redis.set("k", "v")),
      await refusal(oom, () => redis.eval(WRITE_IN_SCRIPT, 1, "k")),
      await refusal(oom, () => redis.multi().set("k", "v").incr("n").exec()),
    ];
    expect((answers[2] as Error).message).toMatch(/^EXECABORT/);
    for (const answer of answers)
      expect(redisTroubleOf(answer)).toMatchObject({
        code: "redis_out_of_memory",
        retryAfterSeconds: 5,
      });
    await redis.del("fill");
  });

  it("too few replicas, read-only, and what else says Redis cannot take the write", async () => {
    const noReplicas = await refusal(["min-replicas-to-write", "1"], () =>
      redis.eval(WRITE_IN_SCRIPT, 1, "k"),
    );
    expect(redisTroubleOf(noReplicas)?.code).toBe("redis_not_replicated");

    const port = new URL(primary.url).port;
    await redis.replicaof("127.0.0.1", port);
    const readOnly = await redis.set("k", "v").catch((e: unknown) => e);
    await redis.replicaof("NO", "ONE");
    expect(redisTroubleOf(readOnly)).toMatchObject({
      code: "redis_read_only",
      retryAfterSeconds: 2,
    });

    // Redis's own words for what this test cannot easily bring about.
    const said = (message: string) => redisTroubleOf(new Error(message))?.code;
    expect(
      said(
        "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk.",
      ),
    ).toBe("redis_not_persisting");
    expect(said("LOADING Redis is loading the dataset in memory")).toBe("redis_unavailable");
    expect(said("CLUSTERDOWN The cluster is down")).toBe("redis_unavailable");
    // Redis 6's form of an error raised inside a script.
    expect(
      said(
        "ERR Error running script (call to f_1): @user_script:1: -OOM command not allowed when used memory > 'maxmemory'.",
      ),
    ).toBe("redis_out_of_memory");
    expect(redisTroubleOf(new NotReplicatedError(0, 1))?.code).toBe("redis_not_replicated");
    expect(redisTroubleOf(new RedisDownError("reconnecting"))?.code).toBe("redis_unavailable");
  });

  it("a connection that is down; not a wrong command or moneyq's own error", async () => {
    const down = new Redis("redis://127.0.0.1:1", {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    down.on("error", () => undefined);
    const refused = await down.get("k").catch((e: unknown) => e);
    down.disconnect();
    expect(redisTroubleOf(refused)?.code).toBe("redis_unavailable");

    await redis.set("a-string", "v");
    const wrongType = await redis.hget("a-string", "f").catch((e: unknown) => e);
    expect((wrongType as Error).message).toMatch(/^WRONGTYPE/);
    expect(redisTroubleOf(wrongType)).toBeUndefined();
    expect(redisTroubleOf(new Error("batch b1 not found"))).toBeUndefined();
    expect(redisTroubleOf("OOM")).toBeUndefined();
  });
});

describe("the write check of readiness", () => {
  it("fails while Redis refuses writes and passes again after, each answer reused a while", async () => {
    const connection = createRedis(server.url, createLogger("silent"), "check");
    await connection.ping();
    try {
      // A second of cache: the few round trips below fit in it even on a loaded machine.
      const check = new RedisWriteCheck(connection, ["check:ready"], 1_000);
      expect(await check.check()).toEqual({ ok: true });
      expect(await redis.pttl("check:ready")).toBeGreaterThan(0);
      await redis.set("fill", "x".repeat(200_000));
      await redis.config("SET", "maxmemory", "1");
      // Within the cache time the last answer stands; after it, the write is refused.
      expect(await check.check()).toEqual({ ok: true });
      await new Promise((r) => setTimeout(r, 1_050));
      expect(await check.check()).toEqual({ ok: false, code: "redis_out_of_memory" });
      await redis.config("SET", "maxmemory", "0");
      await new Promise((r) => setTimeout(r, 1_050));
      expect(await check.check()).toEqual({ ok: true });
    } finally {
      await redis.config("SET", "maxmemory", "0");
      await redis.del("fill");
      connection.disconnect();
    }
  });

  it("fails at once on a connection that is not ready, writing nothing", async () => {
    const connection = createRedis("redis://127.0.0.1:1", createLogger("silent"), "check", {
      lazyConnect: true,
    });
    try {
      const check = new RedisWriteCheck(connection, ["check:ready"]);
      expect(await check.check()).toEqual({ ok: false, code: "redis_unavailable" });
    } finally {
      connection.disconnect();
    }
  });
});
