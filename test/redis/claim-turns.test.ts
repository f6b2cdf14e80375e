import { describe, expect, it } from "vitest";
import type { RedisConnection } from "../../src/redis/connection.js";
import { turnKeys } from "../../src/redis/keys.js";
import { CLAIM_TURNS, RELEASE_TURN } from "../../src/redis/scripts/lua-scripts.js";
import { defineScripts } from "../../src/redis/scripts/script.js";
import { useTestRedis } from "../helpers/redis.js";

// The scripts behind the accounts' turns (processors/account-turns.ts), on a real Redis.
const redis = useTestRedis("turns");

interface Turns {
  moneyqClaimTurns(...args: (string | number)[]): Promise<[number, ...string[]]>;
  moneyqReleaseTurn(...args: string[]): Promise<number>;
}

function open(name: string) {
  const connection = redis.connect();
  defineScripts(connection, CLAIM_TURNS, RELEASE_TURN);
  const keys = turnKeys(`${redis.prefix}:${name}`);
  const scripts = connection as RedisConnection & Turns;
  const claim = (now: number, room: number) =>
    scripts.moneyqClaimTurns(keys.due, keys.held, keys.rung, now, now + 15_000, room, 100);
  const release = (account: string, at: number | undefined, now: number, back = false) =>
    scripts.moneyqReleaseTurn(
      keys.due,
      keys.held,
      keys.rung,
      account,
      at === undefined ? "" : String(at),
      String(now),
      back ? "1" : "0",
    );
  return { connection, keys, claim, release };
}

describe("the turns' scripts", () => {
  it("take the accounts due longest first, as many as there is room for, and count the rest", async () => {
    const { connection, keys, claim } = open("order");
    await connection.zadd(keys.due, 300, "c", 100, "a", 200, "b", 5_000, "later");
    expect(await claim(1_000, 2)).toEqual([1, "a", "b"]);
    expect(await connection.zrange(keys.held, "0", "-1", "WITHSCORES")).toEqual([
      "a",
      "16000",
      "b",
      "16000",
    ]);
    // Not due yet: neither taken nor counted.
    expect(await claim(1_000, 5)).toEqual([0, "c"]);
  });

  it("set aside a ring for an account served meanwhile, and make it due when its turn ends", async () => {
    const { connection, keys, claim, release } = open("rung");
    await connection.zadd(keys.held, 20_000, "busy");
    await connection.zadd(keys.due, 500, "busy");
    expect(await claim(1_000, 5)).toEqual([0]);
    expect(await connection.zcard(keys.due)).toBe(0);
    expect(await connection.smembers(keys.rung)).toEqual(["busy"]);
    // Its holder found nothing left in its queue, yet the ring stands.
    await release("busy", undefined, 2_000);
    expect(await connection.zscore(keys.held, "busy")).toBeNull();
    expect(await connection.zscore(keys.due, "busy")).toBe("2000");
    expect(await connection.scard(keys.rung)).toBe(0);
  });

  it("make a released account due at its next job, and forget one with none", async () => {
    const { connection, keys, release } = open("release");
    await connection.zadd(keys.held, 20_000, "next", 20_000, "none");
    await release("next", 9_000, 2_000);
    await release("none", undefined, 2_000);
    expect(await connection.zrange(keys.due, "0", "-1", "WITHSCORES")).toEqual(["next", "9000"]);
    expect(await connection.zcard(keys.held)).toBe(0);
  });

  it("put a turn handed over with work left at the back of the line", async () => {
    const { connection, keys, release } = open("back");
    await connection.zadd(keys.due, 1_000, "waiting");
    await connection.zadd(keys.held, 20_000, "long");
    await release("long", 2_000, 3_000, true);
    expect(await connection.zrange(keys.due, "0", "-1")).toEqual(["waiting", "long"]);
    expect(await connection.zscore(keys.due, "long")).toBe("3000");
  });

  it("take an account whose holder stopped renewing once its lease has ended", async () => {
    const { connection, keys, claim } = open("lapsed");
    await connection.zadd(keys.held, 5_000, "orphan");
    expect(await claim(4_999, 5)).toEqual([0]);
    expect(await claim(5_000, 5)).toEqual([0, "orphan"]);
    expect(await connection.zscore(keys.held, "orphan")).toBe("20000");
  });
});
