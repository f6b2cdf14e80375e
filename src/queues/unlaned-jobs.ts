import { randomUUID } from "node:crypto";
import type { Job, Queue } from "bullmq";
import type { RedisConnection } from "../redis/connection.js";
import { DELETE_IF_HELD } from "../redis/scripts/delete-if-held.js";
import { defineScripts } from "../redis/scripts/script.js";
import type { JobData } from "./job-data.js";
import { LANE_PRIORITY, type Lane } from "./lanes.js";

/** Jobs moved per round (one LRANGE, then their changePriority calls together). */
const CHUNK = 1_000;
/** How long one process holds an account's pass against the others, renewed each round. */
const PASS_LOCK_MS = 60_000;

type UnlockingRedis = RedisConnection & {
  moneyqDeleteIfHeld(lock: string, token: string): Promise<number>;
};

/**
 * The lane of a job enqueued before lanes existed: a job confirming or looking up an outcome
 * the lookup lane, then its own `priority`, else batch rows bulk and the others urgent.
 */
export function laneOfUnlaned(job: Job<JobData>): Lane {
  const phase = job.data?.state?.phase;
  if (phase !== undefined && phase !== "submit") return "lookup";
  const envelope = job.data?.envelope;
  if (envelope?.priority !== undefined) return envelope.priority;
  return envelope?.batchId === undefined ? "urgent" : "bulk";
}

/**
 * Where jobs without a BullMQ priority wait: the wait list (the paused list while the account
 * is paused), both fetched before every prioritized job, and the delayed set (a backoff, a
 * confirmation, a schedule), from which a due job goes to the wait list.
 */
const UNLANED_HOMES = ["wait", "paused", "delayed"] as const;

/**
 * Moves the jobs of `queue` that have no BullMQ priority (enqueued by a release before lanes)
 * into their lane, oldest first, a chunk at a time. BullMQ fetches its wait list before every
 * prioritized job, so a backlog left there (or coming due from the delayed set, or back from
 * the paused list when the account resumes) would hold up every lookup and urgent job until it
 * is done. One process at a time per account (`lockKey`); another process that starts
 * meanwhile leaves the pass to the one under way. Safe against workers fetching at the same
 * time: a job already taken keeps running, with its new priority recorded. Returns how many
 * jobs were moved.
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
    for (const home of UNLANED_HOMES) moved += await laneJobsIn(queue, home, connection, lockKey);
  } finally {
    defineScripts(connection, DELETE_IF_HELD);
    await (connection as UnlockingRedis).moneyqDeleteIfHeld(lockKey, token);
  }
  return moved;
}

/** One home's pass: a chunk at a time, the pass's lock renewed after each. */
async function laneJobsIn(
  queue: Queue,
  home: (typeof UNLANED_HOMES)[number],
  connection: RedisConnection,
  lockKey: string,
): Promise<number> {
  let moved = 0;
  // Jobs with a priority are not in the lists, except for a moment (a replay): skipped. A
  // delayed job keeps its place (only its priority changes), so the whole chunk is passed.
  let skipped = 0;
  for (;;) {
    const jobs = (await queue.getJobs(
      [home],
      skipped,
      skipped + CHUNK - 1,
      true,
    )) as Job<JobData>[];
    if (jobs.length === 0) return moved;
    const unlaned = jobs.filter((job) => !job.priority);
    await Promise.all(
      unlaned.map((job) => job.changePriority({ priority: LANE_PRIORITY[laneOfUnlaned(job)] })),
    );
    moved += unlaned.length;
    skipped += home === "delayed" ? jobs.length : jobs.length - unlaned.length;
    await connection.pexpire(lockKey, PASS_LOCK_MS);
  }
}
