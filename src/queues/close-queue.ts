import type { Queue } from "bullmq";

/** How long a close waits for a queue's start-up check before closing it anyway. */
const READY_WAIT_MS = 2_000;

/**
 * Closes a queue once its start-up (BullMQ's check of the Redis version) has ended. A queue on
 * a shared connection, closed during that check, drops its error listeners, and the check then
 * fails as the connection closes, with no one listening: an unhandled error that ends the
 * process (taskforcesh/bullmq#3546). A short CLI command on a Redis Cluster met it.
 */
export async function closeOnceReady(queue: Queue): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, READY_WAIT_MS);
  });
  // A start-up that failed (or fails after the wait) leaves nothing to wait for.
  const ready = queue.waitUntilReady().then(
    () => undefined,
    () => undefined,
  );
  try {
    await Promise.race([ready, waited]);
  } finally {
    clearTimeout(timer);
  }
  await queue.close();
}
