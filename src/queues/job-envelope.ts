import { z } from "zod";
import { freeFormObject } from "../contract/free-form.js";
import { IdempotencyKey } from "../contract/headers.js";
import { JOB_KIND_NAMES, JOB_KINDS, type JobKind } from "./job-kinds.js";
import { JOB_PRIORITIES, type JobPriority } from "./lanes.js";

export const ACCOUNT_ALIAS_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;
export const METADATA_MAX_BYTES = 4096;

const common = {
  /** The account alias of the configuration; never the API key. */
  account: z.string().regex(ACCOUNT_ALIAS_PATTERN, {
    message: "must be an account alias: 1 to 32 lowercase letters, digits, '-' or '_'",
  }),
  idempotencyKey: IdempotencyKey,
  batchId: z.string().min(1).max(128).optional(),
  row: z.int().min(1).optional(),
  reference: z.string().min(1).max(128).optional(),
  /** Its lane: `urgent` (default of jobs enqueued one by one) or `bulk` (default of batch rows). */
  priority: z.enum(JOB_PRIORITIES).optional(),
  metadata: freeFormObject(METADATA_MAX_BYTES).optional(),
  /** Not sent before this instant (ISO 8601 with its offset); a job enqueued alone only. */
  notBefore: z.iso
    .datetime({ offset: true, message: "must be an ISO 8601 time with its offset" })
    .optional(),
};

const variants = JOB_KIND_NAMES.map((kind) =>
  z.strictObject({ kind: z.literal(kind), request: JOB_KINDS[kind].request, ...common }),
);

/** One unit of work: a job kind, the operation's request as the contract types it, and its key. */
export const JobEnvelopeSchema = z.discriminatedUnion(
  "kind",
  variants as unknown as [(typeof variants)[number], ...(typeof variants)[number][]],
);

interface Common {
  readonly account: string;
  readonly idempotencyKey: string;
  readonly batchId?: string | undefined;
  readonly row?: number | undefined;
  readonly reference?: string | undefined;
  readonly priority?: JobPriority | undefined;
  readonly metadata?: Record<string, unknown> | undefined;
  readonly notBefore?: string | undefined;
}

export type JobEnvelope = {
  [K in JobKind]: Common & {
    readonly kind: K;
    readonly request: z.output<(typeof JOB_KINDS)[K]["request"]>;
  };
}[JobKind];

/** What a producer is given: the key may be left out when batch id and reference derive it. */
export type JobInput = {
  [K in JobKind]: Omit<Common, "idempotencyKey"> & {
    readonly kind: K;
    readonly request: z.input<(typeof JOB_KINDS)[K]["request"]>;
    readonly idempotencyKey?: string | undefined;
  };
}[JobKind];
