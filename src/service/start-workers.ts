import type { Queue } from "bullmq";
import type { Logger } from "../logger.js";
import { type RunningWorkers, runWorkers } from "../processors/run-workers.js";
import type { JobData } from "../queues/job-data.js";
import { laneUnlanedJobs } from "../queues/unlaned-jobs.js";
import type { RedisConnection } from "../redis/connection.js";
import { type Keyspace, lanePassKey } from "../redis/keys.js";
import { openWorkerParts, type StartWorkersOptions } from "./worker-parts.js";

export type { RunningWorkers } from "../processors/run-workers.js";
export type { StartWorkersOptions } from "./worker-parts.js";

/**
 * Builds the workers' parts, moves jobs an earlier release queued without a lane into their
 * lane, and serves the accounts. Closing stops the workers, then closes the parts built here;
 * the webhooks' close starts with the workers', within the same grace period.
 */
export async function startWorkers(options: StartWorkersOptions): Promise<RunningWorkers> {
  const parts = await openWorkerParts(options);
  let running: RunningWorkers;
  try {
    await laneEarlierJobs(
      parts.queues.byAccount,
      parts.connection,
      parts.results.keyspace,
      parts.logger,
    );
    running = runWorkers(parts);
  } catch (error) {
    await parts.close();
    throw error;
  }
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      const stopped = running.close();
      const webhooksClosed = parts.webhooks
        ?.close(parts.config.pipeline.shutdownGraceMs)
        .catch(() => undefined);
      try {
        await stopped;
      } finally {
        await webhooksClosed;
        await parts.close();
      }
    })();
    return closing;
  };
  return { ...running, close };
}

/**
 * Jobs an earlier release queued without a lane would be fetched before every lane. A failure
 * here (Redis away) leaves them where they are: fetched first, as before. Accounts side by
 * side: one account's backlog does not hold up the start of the others.
 */
async function laneEarlierJobs(
  queues: ReadonlyMap<string, Queue<JobData>>,
  connection: RedisConnection,
  space: Keyspace,
  logger: Logger,
): Promise<void> {
  await Promise.all(
    [...queues].map(async ([alias, queue]) => {
      try {
        const moved = await laneUnlanedJobs(queue, connection, lanePassKey(space, alias));
        if (moved > 0)
          logger.info({ account: alias, jobs: moved }, "queued jobs moved into their lane");
      } catch (error) {
        logger.warn(
          { account: alias, err: (error as Error).message },
          "queued jobs not moved into their lane",
        );
      }
    }),
  );
}
