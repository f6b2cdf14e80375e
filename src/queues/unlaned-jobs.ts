import { randomUUID } from "node:crypto";
import type { Job, Queue } from "bullmq";
import { bullKeys, JOB_FIELDS } from "../redis/bullmq-internals.js";
import type { RedisConnection } from "../redis/connection.js";
import { defineCatalogue } from "../redis/scripts/catalogue.js";
import type { JobData } from "./job-data.js";
import { LANE_PRIORITY, type Lane } from "./lanes.js";

/** Jobs read per round (one LRANGE or ZRANGEBYSCORE), then given their lanes together. */
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
 * Moves the jobs of `queue` that have no BullMQ priority (enqueued by a release before lanes)
 * into their lane, oldest first, a chunk at a time. BullMQ fetches its wait list before every
 * prioritized job, so a backlog left there would hold up every lookup and urgent job until it
 * is done; so would a delayed job (a backoff, a schedule, a confirmation), which goes to the
 * wait list when due. Jobs BullMQ 5 left in a paused account's list join the wait list first.
 * The delayed set goes first: a job that comes due meanwhile is found in the wait list after.
 * One process at a time per account (`lockKey`); another process that starts meanwhile
 * leaves the pass to the one under way. Safe against
 * workers fetching at the same time: a job already taken keeps running, with its new priority
 * recorded; a job that ends meanwhile is passed over. Returns how many jobs were moved.
 */
export async function laneUnlanedJobs(
  queue: Queue<JobData>,
  connection: RedisConnection,
  lockKey: string,
): Promise<number> {
  const token = randomUUID();
  if ((await connection.set(lockKey, token, "PX", PASS_LOCK_MS, "NX")) === null) return 0;
  const renew = () => connection.pexpire(lockKey, PASS_LOCK_MS);
  let moved = 0;
  try {
    moved += await laneDelayed(queue, connection, renew);
    await moveLegacyPaused(queue, connection, renew);
    moved += await laneList(queue, renew);
  } finally {
    defineCatalogue(connection);
    await (connection as UnlockingRedis).moneyqDeleteIfHeld(lockKey, token);
  }
  return moved;
}

/**
 * Gives each job its lane; returns how many moved. A job that ended meanwhile (BullMQ: no key
 * for it any more) is passed over; any other failure stops the pass, to be logged.
 */
async function lane(jobs: readonly Job<JobData>[]): Promise<number> {
  const settled = await Promise.allSettled(
    jobs.map((job) => job.changePriority({ priority: LANE_PRIORITY[laneOfUnlaned(job)] })),
  );
  const failed = settled.find(
    (s): s is PromiseRejectedResult =>
      s.status === "rejected" && !String(s.reason?.message).startsWith("Missing key for job"),
  );
  if (failed) throw failed.reason;
  return settled.filter((s) => s.status === "fulfilled").length;
}

/**
 * Jobs an account paused under BullMQ 5 left in the paused list, which BullMQ 6 no longer
 * reads: moved to the wait list, oldest first, behind the jobs there (each move is one
 * RPOPLPUSH, as many pipelined as the list holds, a chunk at most), where the next step gives
 * them lanes. Almost always the list is gone: one LLEN a start.
 */
async function moveLegacyPaused(
  queue: Queue<JobData>,
  connection: RedisConnection,
  renew: () => Promise<unknown>,
): Promise<void> {
  const paused = bullKeys.legacyPaused(queue.qualifiedName);
  const wait = bullKeys.wait(queue.qualifiedName);
  for (let left = await connection.llen(paused); left > 0; left = await connection.llen(paused)) {
    const pipeline = connection.pipeline();
    for (let i = 0; i < Math.min(left, CHUNK); i++) pipeline.rpoplpush(paused, wait);
    const failed = ((await pipeline.exec()) ?? []).find(([error]) => error !== null)?.[0];
    if (failed) throw failed;
    await renew();
  }
}

/**
 * The wait list, a chunk at a time. A job given its lane leaves the list; one that has a
 * priority already (a replay, for a moment) or could not move is read past.
 */
async function laneList(queue: Queue<JobData>, renew: () => Promise<unknown>): Promise<number> {
  let moved = 0;
  let skipped = 0;
  for (;;) {
    const jobs = await queue.getJobs(["wait"], skipped, skipped + CHUNK - 1, true);
    if (jobs.length === 0) return moved;
    const done = await lane(jobs.filter((job) => !job.priority));
    moved += done;
    skipped += jobs.length - done;
    await renew();
  }
}

/**
 * The delayed set, paged by score (due jobs leave its head while the pass runs, so an index
 * would skip some), reading only each job's priority: most delayed jobs (lookups, backoffs,
 * scheduled rows) have their lane, and only those without one are loaded.
 */
async function laneDelayed(
  queue: Queue<JobData>,
  connection: RedisConnection,
  renew: () => Promise<unknown>,
): Promise<number> {
  let moved = 0;
  let from = "-inf";
  // The members read so far at the last page's last score: the next page starts at that score
  // (a member may have left the set since, so no offset can be trusted) and passes them over.
  let seen = new Set<string>();
  for (;;) {
    const page = await connection.zrangebyscore(
      queue.keys.delayed as string,
      from,
      "+inf",
      "WITHSCORES",
      "LIMIT",
      0,
      CHUNK + seen.size,
    );
    const ids: string[] = [];
    for (let i = 0; i < page.length; i += 2)
      if (!seen.has(page[i] as string)) ids.push(page[i] as string);
    if (ids.length === 0) return moved;
    const last = page[page.length - 1] as string;
    if (last !== from) seen = new Set();
    for (let i = 0; i < page.length; i += 2) if (page[i + 1] === last) seen.add(page[i] as string);
    from = last;
    const priorities = await Promise.all(
      ids.map((id) => connection.hget(queue.toKey(id), JOB_FIELDS.priority)),
    );
    const unlaned = ids.filter((_, i) => !Number(priorities[i] ?? 0));
    const jobs = await Promise.all(unlaned.map((id) => queue.getJob(id)));
    moved += await lane(jobs.filter((job): job is Job<JobData> => job !== undefined));
    await renew();
  }
}
