import { z } from "zod";
import { BATCH_KIND_NAMES } from "../batches/batch-kinds.js";
import { BATCH_STATES, type BatchState } from "../batches/batch-store.js";
import { IdempotencyKey } from "../contract/headers.js";
import { ACCOUNT_ALIAS_PATTERN } from "../queues/job-envelope.js";
import { JOB_KIND_NAMES } from "../queues/job-kinds.js";
import { JOB_PRIORITIES } from "../queues/lanes.js";
import { RESULT_KINDS } from "../results/job-result.js";

const flag = z.enum(["true", "false"]).transform((v) => v === "true");
const account = z.string().regex(ACCOUNT_ALIAS_PATTERN, {
  message: "must be an account alias: 1 to 32 lowercase letters, digits, '-' or '_'",
});
const batchId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, { message: "must be 1 to 64 letters, digits, '-' or '_'" });

/** POST /v1/jobs: one job; the request is checked against the contract by the producer. */
export const SubmitJobBody = z.strictObject({
  kind: z.enum(JOB_KIND_NAMES),
  account: account.optional(),
  request: z.record(z.string(), z.unknown()),
  idempotencyKey: IdempotencyKey.optional(),
  batchId: z.string().optional(),
  reference: z.string().optional(),
  /** `urgent` (the default) or `bulk`: the producer checks it. */
  priority: z.string().optional(),
  metadata: z.unknown().optional(),
  /** Not sent before this instant: the producer checks it. */
  notBefore: z.string().optional(),
});

/** An instant nothing of a batch is sent before: an ISO 8601 time with its offset. */
const notBefore = z.iso.datetime({
  offset: true,
  message: "must be an ISO 8601 time with its offset, such as 2026-12-01T09:00:00Z",
});

/** POST /v1/batches with a JSON body. */
export const SubmitBatchBody = z.strictObject({
  kind: z.enum(BATCH_KIND_NAMES),
  account: account.optional(),
  rows: z.array(z.unknown()),
  dryRun: z.boolean().optional(),
  allowPartial: z.boolean().optional(),
  batchId: batchId.optional(),
  notBefore: notBefore.optional(),
  /** The lane of the batch's jobs: `bulk` (the default) or `urgent`. */
  priority: z.enum(JOB_PRIORITIES).optional(),
});

/** POST /v1/batches with a text/csv body: the same options as query parameters. */
export const SubmitBatchQuery = z.strictObject({
  kind: z.enum(BATCH_KIND_NAMES),
  account: account.optional(),
  dryRun: flag.optional(),
  allowPartial: flag.optional(),
  batchId: batchId.optional(),
  notBefore: notBefore.optional(),
  /** The lane of the batch's jobs: `bulk` (the default) or `urgent`. */
  priority: z.enum(JOB_PRIORITIES).optional(),
});

export const BatchParams = z.strictObject({ batchId });

/** A comma-separated list of values, each one of `values`. */
const listOf = <T extends string>(values: readonly T[], what: string) =>
  z
    .string()
    .transform((text) => text.split(","))
    .refine((items) => items.every((item) => (values as readonly string[]).includes(item)), {
      message: `must be a comma-separated list of ${what}: ${values.join(", ")}`,
    })
    .transform((items) => [...new Set(items)] as T[]);

/** What a report line's `result` can be: a job result, or why the row has none. */
const REPORT_RESULTS = [...RESULT_KINDS, "queued", "invalid", "duplicate"] as const;

export const ResultsQuery = z.strictObject({
  format: z.enum(["csv", "jsonl"]).optional(),
  account: account.optional(),
  /** Only the lines whose result is one of these. */
  result: listOf(REPORT_RESULTS, "results").optional(),
});

const limit = (max: number) =>
  z
    .string()
    .regex(/^\d+$/, { message: "must be a whole number" })
    .transform(Number)
    .refine((n) => n >= 1 && n <= max, { message: `must be 1 to ${max}` });

/** GET /v1/batches: the newest batches of one account (or every account of the token). */
export const BatchListQuery = z.strictObject({
  account: account.optional(),
  state: listOf<BatchState>(BATCH_STATES, "batch states").optional(),
  limit: limit(500).optional(),
});

export const JobParams = z.strictObject({
  jobId: z
    .string()
    .regex(/^j_[0-9a-f]{40}$/, { message: "must be a job id (j_ and 40 hex digits)" }),
});

export const JobByKeyQuery = z.strictObject({
  idempotencyKey: IdempotencyKey,
  account: account.optional(),
});

export const AccountQuery = z.strictObject({ account: account.optional() });

/** A list of one of the caller's accounts (dead letters, failed webhook deliveries), newest first. */
export const AccountListQuery = z.strictObject({
  account: account.optional(),
  limit: limit(1000).optional(),
});

/** GET /v1/dead-letters: a list, or the dead letters of one reference or one key. */
export const DeadLetterQuery = AccountListQuery.extend({
  reference: z.string().min(1).max(200).optional(),
  idempotencyKey: IdempotencyKey.optional(),
});

export const AccountParams = z.strictObject({ alias: account });

/** An account's currency lane: /v1/accounts/{alias}/holds/{currency}/... */
export const LaneParams = z.strictObject({
  alias: account,
  currency: z
    .string()
    .regex(/^[A-Z]{3,10}$/, { message: "must be a currency code (3 to 10 capital letters)" }),
});

/** Which hold of a lane a cancel ends. */
export const HoldCancelBody = z.strictObject({
  cause: z.enum(["velocity", "insufficient_funds"]),
});

/** POST /v1/jobs/{jobId}/resolve: what the provider did, a note, and its id where known. */
export const ResolveBody = z.strictObject({
  result: z.enum(["succeeded", "failed"]),
  note: z.string().trim().min(1).max(500),
  upstreamId: z
    .string()
    .min(1)
    .max(256)
    .regex(/^[\x21-\x7e]+$/, { message: "must be visible ASCII characters" })
    .optional(),
});

export const PauseBody = z
  .strictObject({ reason: z.string().min(1).max(500).optional() })
  .optional();

/**
 * A webhook event id: the event's own (`evt_` and 32 hex digits), or the results stream entry
 * id of a result an earlier release wrote without an envelope.
 */
export const WebhookEventParams = z.strictObject({
  eventId: z.string().regex(/^(evt_[0-9a-f]{32}|\d{1,20}-\d{1,20})$/, {
    message: "must be a webhook event id (evt_ and 32 hex digits)",
  }),
});
