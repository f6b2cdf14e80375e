import { afterAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.js";
import { LaneWakes, listenForWakes } from "../../src/processors/lane-wakes.js";
import type { JobInput } from "../../src/queues/job-envelope.js";
import { laneWakeMessage, parseLaneWake } from "../../src/queues/lanes.js";
import { Producer } from "../../src/queues/producer.js";
import { laneWakeChannel } from "../../src/redis/keys.js";
import { bankJob } from "../fixtures/batches.js";
import { useTestRedis } from "../helpers/redis.js";
import { waitUntil } from "../helpers/wait-until.js";

// A bulk request waits for its slot far longer than any test runs: it ends only if woken.
const LONG_MS = 600_000;
const redis = useTestRedis("wakes");
const opened: { close(): Promise<void> }[] = [];
afterAll(async () => {
  await Promise.allSettled(opened.map((o) => o.close()));
});

/** A sleep whose end is observable without waiting for it. */
function sleeper(wakes: LaneWakes, account: string, signal?: AbortSignal) {
  const state = { ended: false };
  const sleeping = wakes.sleep(account, LONG_MS, signal).then(() => {
    state.ended = true;
  });
  return { state, sleeping };
}

/** Lets every promise settled so far run its handlers. */
const settle = () => new Promise((r) => setImmediate(r));

describe("LaneWakes", () => {
  it("ends the waits of as many of the account's requests as asked, longest waiting first", async () => {
    const wakes = new LaneWakes();
    const first = sleeper(wakes, "alpha");
    const second = sleeper(wakes, "alpha");
    const third = sleeper(wakes, "alpha");
    const other = sleeper(wakes, "beta");
    wakes.wake("alpha", 2);
    await settle();
    expect([first, second, third, other].map((s) => s.state.ended)).toEqual([
      true,
      true,
      false,
      false,
    ]);
    wakes.wake("alpha", 5);
    wakes.wake("beta", 1);
    await Promise.all([third.sleeping, other.sleeping]);
    // Nobody waits any more: a wake finds no one and is lost, as a poll would find nothing.
    wakes.wake("alpha", 1);
  });

  it("ends a wait when the job's signal aborts", async () => {
    const wakes = new LaneWakes();
    const controller = new AbortController();
    const waiting = sleeper(wakes, "alpha", controller.signal);
    controller.abort();
    await waiting.sleeping;
    expect(waiting.state.ended).toBe(true);
  });

  it("ends a wait at its time without a wake", async () => {
    const wakes = new LaneWakes();
    await wakes.sleep("alpha", 1, undefined);
    wakes.wake("alpha", 1);
  });

  it("reads only well-formed wake messages", () => {
    expect(parseLaneWake(laneWakeMessage("alpha-2", 3))).toEqual({ account: "alpha-2", count: 3 });
    for (const bad of ["", "alpha", "alpha 0", "Alpha 1", "alpha 1 2", "alpha -1", "alpha 1e3"])
      expect(parseLaneWake(bad)).toBeUndefined();
  });
});

describe("a producer that enqueues urgent jobs", () => {
  it("wakes the account's waiting bulk requests in every worker process, one per urgent job", async () => {
    const prefix = `${redis.prefix}:wake`;
    const connection = redis.connect();
    const wakes = new LaneWakes();
    opened.push(
      listenForWakes(
        redis.connect(),
        prefix,
        { lanes: wakes, turns: () => undefined },
        createLogger("silent"),
      ),
    );
    await waitUntil(
      async () => {
        const [, subscribers] = (await connection.pubsub("NUMSUB", laneWakeChannel(prefix))) as [
          string,
          number,
        ];
        return subscribers === 1;
      },
      5_000,
      "the wake subscription",
    );
    const producer = new Producer({
      connection,
      prefix,
      accounts: ["alpha", "beta"],
      maxAttempts: 3,
      retentionMs: 60_000,
    });
    opened.push(producer);
    const waiting = [1, 2, 3, 4].map(() => sleeper(wakes, "alpha"));
    const beta = sleeper(wakes, "beta");
    const payout = (key: string, priority?: "urgent" | "bulk"): JobInput =>
      bankJob({ account: "alpha", idempotencyKey: key, ...(priority && { priority }) }) as JobInput;

    // Bulk rows wake nobody; one job enqueued alone (urgent) wakes one request.
    await producer.enqueueMany([payout("bulk-1"), payout("bulk-2")]);
    await producer.enqueue(payout("urgent-1"));
    await waiting[0]?.sleeping;
    await settle();
    expect(waiting.map((w) => w.state.ended)).toEqual([true, false, false, false]);

    // Two urgent jobs among bulk rows wake two more, and none of another account.
    await producer.enqueueMany([
      payout("bulk-3"),
      payout("urgent-2", "urgent"),
      payout("urgent-3", "urgent"),
    ]);
    await waiting[2]?.sleeping;
    await settle();
    expect(waiting.map((w) => w.state.ended)).toEqual([true, true, true, false]);
    expect(beta.state.ended).toBe(false);
    wakes.wake("alpha", 1);
    wakes.wake("beta", 1);
  });
});
