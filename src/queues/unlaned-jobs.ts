import { randomUUID } from "node:crypto";
import type { Job, Queue } from "bullmq";
import type { RedisConnection } from "../redis/connection.js";
import { DELETE_IF_HELD } from "../redis/scripts/delete-if-held.js";
import { defineScripts } from "../redis/scripts/script.js";
import type { JobData } from "./job-data.js";
import { type JobPriority, LANE_PRIORITY } from "./lanes.js";

/** Jobs moved per round (one LRANGE, then their changePriority calls together). */
const CHUNK = 1_000;
/** How long one process holds an account's pass against the others, renewed each round. */
const PASS_LOCK_MS = 60_000;

type UnlockingRedis = RedisConnection & {
  moneyqDeleteIfHeld(lock: string, token: string): Promise<number>;
};

/** The lane of a job enqueued before lanes existed: batch rows bulk, the others urgent. */
export function laneOfUnlaned(job: Job<JobData>): JobPriority {
  const envelope = job.data?.envelope;
  if (envelope?.priority !== undefined) return envelope.priority;
  return envelope?.batchId === undefined ? "urgent" : "bulk";
}

/**
 * Moves the jobs of `queue`'s wait list that have no BullMQ priority (enqueued by a release
 * before lanes) into their lane, oldest first, a chunk at a time. BullMQ fetches its wait list
 * before every prioritized job, so a backlog left there would hold up every lookup and urgent
 * job until it is done. One process at a time per account (`lockKey`); another process that
 * starts meanwhile leaves the pass to the one under way. Safe against workers fetching at the
 * same time: a job already taken keeps running, with its new priority recorded. Returns how
 * many jobs were moved.
 */
export async function laneUnlanedJobs(
  queue: Queue,
  connection: RedisConnection,
  lockKey: string,
): Promise<number> {
  const token = randomUUID();
  if ((await connection.set(lockKey, token, "PX", PASS_LOCK_MS, "NX")) === null) return 0;
  let moved = 0;
  try {
    // Jobs with a priority are not in the wait list, except for a moment (a replay): skipped.
    let skipped = 0;
    for (;;) {
      const jobs = (await queue.getJobs(
        ["wait"],
        skipped,
        skipped + CHUNK - 1,
        true,
      )) as Job<JobData>[];
      if (jobs.length === 0) break;
      const unlaned = jobs.filter((job) => !job.priority);
      await Promise.all(
        unlaned.map((job) => job.changePriority({ priority: LANE_PRIORITY[laneOfUnlaned(job)] })),
      );
      moved += unlaned.length;
      skipped += jobs.length - unlaned.length;
      await connection.pexpire(lockKey, PASS_LOCK_MS);
    }
  } finally {
    defineScripts(connection, DELETE_IF_HELD);
    await (connection as UnlockingRedis).moneyqDeleteIfHeld(lockKey, token);
  }
  return moved;
}
