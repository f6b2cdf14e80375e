import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { JobResult } from "./job-result.js";

/**
 * The batch events, each recorded once per batch by the script that moves the batch into the
 * state it names (redis/scripts/batch-events.ts).
 */
export const BATCH_EVENT_TYPES = [
  "batch.awaiting_approval",
  "batch.approved",
  "batch.rejected",
  "batch.started",
  "batch.completed",
  "batch.completed_with_failures",
  "batch.cancelled",
] as const;
export type BatchEventType = (typeof BATCH_EVENT_TYPES)[number];

/**
 * Every entry of the results stream and every webhook body: `type` says what happened
 * (`job.<result>` or a batch event), `id` is unique and kept on redelivery (receivers
 * deduplicate on it; webhooks send it as `webhook-id`), `timestamp` is when it happened,
 * `data` the job's result or the batch's summary.
 */
export const EventEnvelope = z.object({
  type: z.string(),
  id: z.string(),
  timestamp: z.string(),
  data: z.record(z.string(), z.unknown()),
});
export type EventEnvelope = z.infer<typeof EventEnvelope>;

/** A new event id: `evt_` and 32 hex digits. */
export function newEventId(): string {
  return `evt_${randomBytes(16).toString("hex")}`;
}

/** The envelope of a job's terminal result, as JSON; `resultJson` is the result's own JSON. */
export function jobEventJson(result: JobResult, resultJson: string): string {
  const head = JSON.stringify({
    type: `job.${result.result}`,
    id: newEventId(),
    timestamp: result.finishedAt,
  });
  return `${head.slice(0, -1)},"data":${resultJson}}`;
}
