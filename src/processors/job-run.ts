import type { Job } from "bullmq";
import type { PaymentsClient } from "../client/payments-client.js";
import type { AccountConfig } from "../config/load-config.js";
import { isOutflow } from "../outflow/outflow-check.js";
import { type JobData, type JobState, mayHaveBeenSent } from "../queues/job-data.js";
import type { JobEnvelope } from "../queues/job-envelope.js";
import { JOB_KINDS, type JobKindSpec } from "../queues/job-kinds.js";
import { queueAccount } from "../queues/queue-names.js";
import { jobKeyOf } from "../redis/bullmq-internals.js";
import type { JobFacts } from "../tracing/job-spans.js";
import type { ClassifyContext } from "./classify.js";

/** The fields every log line of a run carries. */
export interface RunLog {
  readonly jobId: string | undefined;
  readonly key: string;
  readonly kind: string;
  readonly account: string;
  readonly attempt: number;
}

/** One run of a valid job: what each step reads, so that none holds state of its own. */
export interface JobRun {
  readonly job: Job<JobData>;
  /** This worker's lock token; steps that write the job check it still holds. */
  readonly token: string | undefined;
  /** Fires when this worker lost the job's lock: the run stops at once. */
  readonly signal: AbortSignal | undefined;
  readonly envelope: JobEnvelope;
  readonly account: AccountConfig;
  readonly client: PaymentsClient;
  readonly spec: JobKindSpec;
  readonly state: JobState;
  /** Whether an earlier attempt may have reached the provider, read before this one marks "sent". */
  readonly sentEarlier: boolean;
  /** For a kind without an idempotency key, while submitting: the job's hash, which records "sent". */
  readonly sentKey: string | undefined;
  readonly log: RunLog;
}

/** Begins a run of a job whose envelope and account were checked. */
export function startRun(
  job: Job<JobData>,
  token: string | undefined,
  signal: AbortSignal | undefined,
  checked: Pick<JobRun, "envelope" | "account" | "client">,
): JobRun {
  const { envelope } = checked;
  const spec = JOB_KINDS[envelope.kind];
  const state: JobState = job.data.state ?? { phase: "submit" };
  return {
    job,
    token,
    signal,
    ...checked,
    spec,
    state,
    sentEarlier: mayHaveBeenSent(job, state),
    sentKey: !spec.idempotent && state.phase === "submit" ? jobKeyOf(job) : undefined,
    log: {
      jobId: job.id,
      key: envelope.idempotencyKey,
      kind: envelope.kind,
      account: envelope.account,
      attempt: job.attemptsMade + 1,
    },
  };
}

/**
 * What the job's spans say of it, read from the job itself (its envelope may be invalid): the
 * account is its queue's.
 */
export function jobFacts(job: Job<JobData>): JobFacts {
  return {
    jobId: job.id,
    kind: job.name,
    account: queueAccount(job.queueName),
    attempt: job.attemptsMade + 1,
  };
}

/** A non-idempotent request an earlier release marked sent: it must never leave again. */
export const markedSent = (run: JobRun): boolean =>
  !run.spec.idempotent && run.state.phase === "submit" && run.state.sentAt !== undefined;

/** What the classifier needs to know of the run. */
export function classifyContextOf(run: JobRun, fundsHold: boolean): ClassifyContext {
  const { job, state } = run;
  // Reconciling lookups are as many as submission attempts, counted in the job's state.
  const attempts = job.opts.attempts ?? 1;
  return {
    phase: state.phase,
    idempotent: run.spec.idempotent,
    lastAttempt:
      state.phase === "reconcile"
        ? (state.lookups ?? 0) + 1 >= attempts
        : job.attemptsMade + 1 >= attempts,
    possiblySent: state.possiblySent === true,
    sentBefore: run.sentEarlier,
    holdsOnFunds: fundsHold && isOutflow(run.envelope.kind),
  };
}
