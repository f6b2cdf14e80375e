/**
 * The three lanes of an account (docs/pipeline.md, "Lanes"): a free slot goes to a due lookup
 * first, then to an urgent job, then to bulk. A job's lane is its BullMQ priority, so workers
 * also fetch in that order.
 */
export type Lane = "lookup" | "urgent" | "bulk";

/** What a producer may ask for; the lookup lane is the pipeline's own. */
export type JobPriority = Exclude<Lane, "lookup">;
export const JOB_PRIORITIES = ["urgent", "bulk"] as const satisfies readonly JobPriority[];

/** BullMQ priority of each lane: lower is fetched first. */
export const LANE_PRIORITY: Readonly<Record<Lane, number>> = Object.freeze({
  lookup: 1,
  urgent: 2,
  bulk: 3,
});

/** The lane of a job with BullMQ priority `priority` (0, no priority: enqueued before lanes). */
export function laneOfPriority(priority: number | undefined): Lane {
  if (priority === LANE_PRIORITY.lookup) return "lookup";
  return priority === LANE_PRIORITY.bulk ? "bulk" : "urgent";
}

/**
 * The message a producer publishes when it enqueued `count` urgent jobs on `account`, so that
 * workers whose places are all held by waiting bulk jobs make room at once
 * (processors/lane-wakes.ts).
 */
export function laneWakeMessage(account: string, count: number): string {
  return `${account} ${count}`;
}

/** Reads a wake message; undefined for anything else. */
export function parseLaneWake(message: string): { account: string; count: number } | undefined {
  const match = /^([a-z][a-z0-9_-]{0,31}) ([1-9]\d{0,5})$/.exec(message);
  return match ? { account: match[1] as string, count: Number(match[2]) } : undefined;
}
