import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { JobResult } from "./job-result.js";

/**
 * Every entry of the results stream and every webhook body: `type` says what happened
 * (`job.<result>`, `job.approved`, `job.rejected`, or a batch event: docs/batches.md), `id`
 * is unique and kept on redelivery (receivers deduplicate on it; webhooks send it as
 * `webhook-id`), `timestamp` is when it happened, `data` the job's result or the summary of
 * the batch or held job.
 */
export const EventEnvelope = z.object({
  type: z.string(),
  id: z.string(),
  timestamp: z.string(),
  data: z.record(z.string(), z.unknown()),
});
export type EventEnvelope = z.infer<typeof EventEnvelope>;

/**
 * A new event id: `evt_` and 32 hex digits, those of a random UUID (122 random bits). One is
 * made for every result; `randomUUID` draws from a cached pool of entropy, where
 * `randomBytes(16)` asks the system for each (about ten times the CPU).
 */
export function newEventId(): string {
  return `evt_${randomUUID().replaceAll("-", "")}`;
}

/**
 * The envelope of a job's terminal result, as JSON, up to its `data`: the result's own JSON
 * and a closing `}` complete it. Apart, so that the emission sends the result's JSON once and
 * the script joins the two (redis/scripts/emit-results.lua).
 */
export function jobEventHead(result: JobResult): string {
  const head = JSON.stringify({
    type: `job.${result.result}`,
    id: newEventId(),
    timestamp: result.finishedAt,
  });
  return `${head.slice(0, -1)},"data":`;
}
