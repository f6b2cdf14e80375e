import { DelayedError, type Job, Queue, Worker, type WorkerOptions } from "bullmq";
import { afterEach, describe, expect, it } from "vitest";
import {
  bullKeys,
  JOB_FIELDS,
  jobKeyOf,
  lockKeyOf,
  markedAt,
  priorityScore,
  priorityScoreRange,
  workDueAt,
} from "../../src/redis/bullmq-internals.js";
import { useTestRedis } from "../helpers/redis.js";
import { waitFor } from "../helpers/wait-until.js";

// The contract with BullMQ beyond its public API (src/redis/bullmq-internals.ts): each case
// runs BullMQ's own operations and reads Redis as moneyq's scripts do. An upgrade that changes
// one of these fails here by name.
const redis = useTestRedis("bullmq");
const opened: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((close) => close()));
});

let queues = 0;
function newQueue(): Queue {
  const queue = new Queue(`contract-${++queues}`, {
    connection: redis.connect(),
    prefix: redis.prefix,
  });
  opened.push(() => queue.close());
  return queue;
}

function newWorker(
  queue: Queue,
  process: (job: Job, token: string | undefined) => Promise<unknown>,
  options: Omit<WorkerOptions, "connection"> = {},
): Worker {
  const worker = new Worker(queue.name, process, {
    connection: redis.connect(),
    prefix: redis.prefix,
    ...options,
  });
  // Forced: a worker whose run never ends (the stalled case) would hold a plain close forever.
  opened.push(() => worker.close(true));
  return worker;
}

/** Waits until BullMQ reports `job` in `state`. */
function reachesState(queue: Queue, job: Job, state: string): Promise<unknown> {
  const id = job.id as string;
  return waitFor(
    () => queue.getJobState(id),
    (s) => s === state,
    10_000,
    `job ${id} ${state}`,
  );
}

describe("BullMQ's internals as moneyq relies on them", () => {
  it("names a queue's key, a job's hash and the queue's meta hash as bullKeys does", async () => {
    const queue = newQueue();
    const job = await queue.add("k", { a: 1 }, { jobId: "j-1" });
    const connection = redis.connect();
    expect(queue.qualifiedName).toBe(bullKeys.queue(redis.prefix, queue.name));
    expect(jobKeyOf(job)).toBe(bullKeys.job(queue.qualifiedName, "j-1"));
    expect(await connection.exists(bullKeys.meta(queue.qualifiedName))).toBe(1);
    const [data, priority, timestamp, attempts] = await connection.hmget(
      jobKeyOf(job),
      JOB_FIELDS.data,
      JOB_FIELDS.priority,
      JOB_FIELDS.timestamp,
      JOB_FIELDS.attemptsMade,
    );
    expect(JSON.parse(data as string)).toEqual({ a: 1 });
    expect(Number(priority)).toBe(0);
    expect(Number(timestamp)).toBe(job.timestamp);
    expect(attempts).toBeNull();
  });

  it("gives a prioritized job the score priority * 2^32 + a counter per job added", async () => {
    const queue = newQueue();
    const jobs = [
      await queue.add("k", {}, { priority: 3 }),
      await queue.add("k", {}, { priority: 1 }),
      await queue.add("k", {}, { priority: 3 }),
    ];
    const connection = redis.connect();
    const prioritized = bullKeys.prioritized(queue.qualifiedName);
    const scores = await Promise.all(
      jobs.map((job) => connection.zscore(prioritized, job.id as string)),
    );
    expect(scores.map(Number)).toEqual([
      priorityScore(3, 1),
      priorityScore(1, 2),
      priorityScore(3, 3),
    ]);
    const [from, to] = priorityScoreRange(3);
    expect(await connection.zrangebyscore(prioritized, from, to)).toEqual([
      jobs[0]?.id,
      jobs[2]?.id,
    ]);
  });

  it("keeps a job without priority in the wait list, also while the queue is paused", async () => {
    const queue = newQueue();
    await queue.pause();
    const job = await queue.add("k", {});
    const connection = redis.connect();
    expect(await connection.lrange(bullKeys.wait(queue.qualifiedName), 0, -1)).toEqual([job.id]);
    expect(await connection.hexists(bullKeys.meta(queue.qualifiedName), "paused")).toBe(1);
    expect(await connection.exists(bullKeys.legacyPaused(queue.qualifiedName))).toBe(0);
  });

  it("holds a job's lock, valued with the processor's token, while the job runs, and drops it after", async () => {
    const queue = newQueue();
    const connection = redis.connect();
    const seen: {
      lock: string | null;
      token: string | undefined;
      active: string[];
      dueAt: number | undefined;
    }[] = [];
    const now = Date.now();
    newWorker(queue, async (job, token) => {
      seen.push({
        lock: await connection.get(lockKeyOf(job)),
        token,
        active: await connection.lrange(bullKeys.active(queue.qualifiedName), 0, -1),
        dueAt: await workDueAt(connection, queue.qualifiedName, now),
      });
    });
    const job = await queue.add("k", {});
    await reachesState(queue, job, "completed");
    expect(seen).toHaveLength(1);
    expect(seen[0]?.token).toBeTruthy();
    expect(seen[0]?.lock).toBe(seen[0]?.token);
    expect(seen[0]?.active).toEqual([job.id]);
    // An active job is work: a turn is not given up while one is in the active list.
    expect(seen[0]?.dueAt).toBe(now);
    expect(await connection.exists(lockKeyOf(job))).toBe(0);
    expect(await workDueAt(connection, queue.qualifiedName, now)).toBeUndefined();
  });

  it("moveToDelayed puts an active job in the delayed set and releases its lock", async () => {
    const queue = newQueue();
    const connection = redis.connect();
    const at = Date.now() + 600_000;
    newWorker(queue, async (job, token) => {
      await job.moveToDelayed(at, token);
      throw new DelayedError();
    });
    const job = await queue.add("k", {});
    await reachesState(queue, job, "delayed");
    expect(
      await connection.zscore(bullKeys.delayed(queue.qualifiedName), job.id as string),
    ).not.toBeNull();
    expect(await connection.exists(lockKeyOf(job))).toBe(0);
    expect(await connection.lrange(bullKeys.active(queue.qualifiedName), 0, -1)).toEqual([]);
  });

  it("moves a job found active without its lock back to wait, counting it in stc", async () => {
    const queue = newQueue();
    const connection = redis.connect();
    // The first worker takes the job and never renews its lock (a process frozen past it).
    let taken = false;
    newWorker(
      queue,
      async () => {
        taken = true;
        await new Promise(() => {});
      },
      { skipLockRenewal: true, skipStalledCheck: true, lockDuration: 1_000 },
    );
    const job = await queue.add("k", {});
    await waitFor(() => taken, Boolean, 10_000, "the first worker's run");
    const reruns: { stalled: number; stc: string | null }[] = [];
    newWorker(
      queue,
      async (again) => {
        reruns.push({
          stalled: again.stalledCounter,
          stc: await connection.hget(jobKeyOf(again), JOB_FIELDS.stalledCounter),
        });
      },
      { stalledInterval: 300 },
    );
    await waitFor(
      () => reruns.length,
      (n) => n > 0,
      15_000,
      "the stalled job's second run",
    );
    expect(reruns[0]?.stalled).toBe(1);
    expect(reruns[0]?.stc).toBe("1");
    expect(job.id).toBeDefined();
  });

  it("marks a queue with jobs waiting at 0 and with delayed jobs at the next one's due time", async () => {
    const connection = redis.connect();
    const waiting = newQueue();
    const now = Date.now();
    expect(await markedAt(connection, waiting.qualifiedName, now)).toBeUndefined();
    await waiting.add("k", {});
    expect(
      await connection.zrange(bullKeys.marker(waiting.qualifiedName), "0", "-1", "WITHSCORES"),
    ).toEqual(["0", "0"]);
    expect(await markedAt(connection, waiting.qualifiedName, now)).toBe(now);
    const delayed = newQueue();
    const job = await delayed.add("k", {}, { delay: 60_000 });
    const dueAt = job.timestamp + 60_000;
    expect(await markedAt(connection, delayed.qualifiedName, now)).toBe(dueAt);
    expect(await workDueAt(connection, delayed.qualifiedName, now)).toBe(dueAt);
  });

  it("has no marker for a paused queue's jobs, and its waiting jobs are not due", async () => {
    const connection = redis.connect();
    const queue = newQueue();
    await queue.pause();
    await queue.add("k", {});
    const now = Date.now();
    expect(await connection.exists(bullKeys.marker(queue.qualifiedName))).toBe(0);
    expect(await workDueAt(connection, queue.qualifiedName, now)).toBeUndefined();
    await queue.resume();
    expect(await markedAt(connection, queue.qualifiedName, now)).toBe(now);
    expect(await workDueAt(connection, queue.qualifiedName, now)).toBe(now);
  });
});
