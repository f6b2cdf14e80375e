import { DelayedError, type Job, RateLimitError, UnrecoverableError, type Worker } from "bullmq";
import type { PaymentsClient } from "../client/payments-client.js";
import type { AccountConfig, PipelineConfig } from "../config.js";
import { formatFieldIssues, validate } from "../contract/field-issues.js";
import type { Logger } from "../logger.js";
import type { PipelineMetrics } from "../metrics/pipeline-metrics.js";
import type { AccountPauses } from "../queues/account-pauses.js";
import { type JobEnvelope, JobEnvelopeSchema } from "../queues/job-envelope.js";
import { JOB_KINDS } from "../queues/job-kinds.js";
import type { JobResult, ResultKind } from "../results/job-result.js";
import { batchKeys, type ResultsStore } from "../results/results-store.js";
import { type Action, classify, type Outcome, type Phase } from "./classify.js";
import type { RateGate } from "./rate-gate.js";
import { lookUp, readAnswer, submit } from "./upstream-call.js";

/** What moneyq keeps in a job beside the envelope, so a later run knows where the job stands. */
export interface JobState {
  readonly phase: Phase;
  readonly upstreamId?: string | undefined;
  readonly upstreamStatus?: string | undefined;
  readonly pendingSince?: number | undefined;
  readonly lookups?: number | undefined;
  /** Non-idempotent kinds: set just before the request is sent; a later run must not resend. */
  readonly sentAt?: number | undefined;
  readonly firstStartedAt?: number | undefined;
}

export interface JobData {
  readonly envelope: JobEnvelope;
  readonly state?: JobState;
}

export interface ProcessorDeps {
  readonly accounts: ReadonlyMap<string, AccountConfig>;
  readonly clients: ReadonlyMap<string, PaymentsClient>;
  readonly gate: RateGate;
  readonly results: ResultsStore;
  readonly pauses: AccountPauses;
  readonly pipeline: PipelineConfig;
  /** Redis key prefix (config.redisPrefix): batches are looked up under it. */
  readonly prefix: string;
  readonly metrics: PipelineMetrics;
  readonly logger: Logger;
  /** Called with each terminal result once it is recorded (batch counters, webhooks). */
  readonly onResult?: (result: JobResult) => Promise<void>;
}

/** First confirmation lookup after this long; each next one waits twice as long, up to the cap. */
export const CONFIRM_FIRST_DELAY_MS = 200;
export const CONFIRM_MAX_DELAY_MS = 30_000;
/** A lookup after retries ran out waits this long, so the provider can finish what it started. */
export const RECONCILE_DELAY_MS = 1_000;

/**
 * A process's first requests leave late (cold code, new connections), so each takes two slots
 * and its lateness cannot crowd the second after it. Four were enough in measurements: at
 * R = 40 the first second's spans kept 150 ms or more to spare, and the tightest span of the
 * run came later; one per concurrent job cost 4% of the rate there.
 */
const COLD_REQUESTS = 4;
/** Slots a request may take before a late-running worker hands its job back. */
const SLOT_TRIES = 3;

export function confirmDelayMs(lookups: number): number {
  return Math.min(CONFIRM_MAX_DELAY_MS, CONFIRM_FIRST_DELAY_MS * 2 ** lookups);
}

/** Thrown for a job whose terminal result is a failure, so that it lands in the dead letters. */
function deadLetter(result: JobResult): UnrecoverableError {
  return new UnrecoverableError(
    `${result.result}: ${result.code ?? ""} ${result.message ?? ""}`.trim(),
  );
}

const errorCodeOf = (error: unknown): string =>
  typeof (error as { code?: unknown }).code === "string"
    ? (error as { code: string }).code
    : "unexpected";

const statusClass = (error: unknown): string => {
  const status = (error as { status?: number }).status;
  return status === undefined ? "error" : `${Math.floor(status / 100)}xx`;
};

/** The BullMQ processor of an account queue. `worker()` is the worker it runs in. */
export function createJobProcessor(deps: ProcessorDeps, worker: () => Worker) {
  const { metrics, logger } = deps;
  let coldLeft = COLD_REQUESTS;

  async function finish(
    job: Job<JobData>,
    envelope: JobEnvelope,
    fields: Omit<
      JobResult,
      | "jobId"
      | "kind"
      | "account"
      | "idempotencyKey"
      | "attempts"
      | "enqueuedAt"
      | "finishedAt"
      | "durationMs"
    >,
  ) {
    const now = Date.now();
    const result: JobResult = {
      jobId: job.id as string,
      kind: envelope.kind,
      account: envelope.account,
      idempotencyKey: envelope.idempotencyKey,
      ...(envelope.batchId !== undefined && { batchId: envelope.batchId }),
      ...(envelope.row !== undefined && { row: envelope.row }),
      ...(envelope.reference !== undefined && { reference: envelope.reference }),
      ...fields,
      attempts: job.attemptsMade + 1,
      enqueuedAt: new Date(job.timestamp).toISOString(),
      finishedAt: new Date(now).toISOString(),
      durationMs: now - job.timestamp,
    };
    const first = await deps.results.emit(result);
    const recorded = first ? result : ((await deps.results.get(result.jobId)) ?? result);
    if (first) {
      const labels = {
        account: deps.accounts.has(envelope.account) ? envelope.account : "unknown",
        kind: envelope.kind in JOB_KINDS ? envelope.kind : "unknown",
        result: result.result,
      };
      metrics.jobsFinished.inc({ queue: job.queueName, ...labels });
      if (result.result !== "succeeded")
        metrics.jobErrors.inc({ ...labels, code: result.code ?? "none" });
      metrics.jobDuration.observe(labels, result.durationMs / 1000);
      metrics.jobProcessingDuration.observe(
        labels,
        (now - (job.data.state?.firstStartedAt ?? job.processedOn ?? now)) / 1000,
      );
      logger.info(
        {
          jobId: result.jobId,
          key: result.idempotencyKey,
          kind: result.kind,
          account: result.account,
          attempt: result.attempts,
          outcome: result.result,
          code: result.code,
          upstreamId: result.upstreamId,
        },
        "job finished",
      );
      await deps.onResult?.(result);
    }
    if (recorded.result !== "succeeded" && recorded.result !== "cancelled")
      throw deadLetter(recorded);
  }

  async function moveLater(
    job: Job<JobData>,
    token: string | undefined,
    state: JobState,
    delayMs: number,
  ): Promise<never> {
    await job.updateData({ ...job.data, state });
    await job.moveToDelayed(Date.now() + delayMs, token);
    throw new DelayedError();
  }

  /**
   * Waits for this request's slot of the account's rate. A worker that wakes up later than half
   * the margin after its slot gives the slot up and takes a new one: sending late could crowd
   * the second that follows. An unused slot costs capacity, never safety.
   */
  async function takeSlot(
    account: string,
    perSecond: number,
    batchKey?: string,
  ): Promise<"sent" | "cancelled"> {
    const tolerance = deps.pipeline.rateWindowMarginMs / 2;
    for (let tries = 0; tries < SLOT_TRIES; tries += 1) {
      // Decided before the await: concurrent jobs must not all see the same cold count.
      const weight = coldLeft > 0 ? 2 : 1;
      if (coldLeft > 0) coldLeft -= 1;
      // Lateness counts from when the reservation left, not when its answer came back: the
      // slot was set somewhere in between, so this errs on the side of the limit.
      const asked = performance.now();
      const slot = await deps.gate.reserve(account, perSecond, weight, batchKey);
      if (!slot.reserved) {
        if ("cancelled" in slot) return "cancelled";
        return pauseFor(account, slot.retryInMs, "local");
      }
      const due = asked + slot.delayMs;
      // Under a millisecond early is within the margin; a timer would cost more than it saves.
      // Rounded up, so a timer never fires before the slot.
      if (slot.delayMs >= 1)
        await new Promise((resolve) => setTimeout(resolve, Math.ceil(slot.delayMs)));
      if (performance.now() - due <= tolerance) return "sent";
      metrics.rateSlotsMissed.inc({ account });
    }
    // Late every time: this process is overloaded; hand the job back instead of crowding the rate.
    throw new RateLimitError();
  }

  async function pauseFor(
    account: string,
    delayMs: number,
    source: "upstream" | "local",
  ): Promise<never> {
    metrics.rateLimitPauses.inc({ account, source });
    metrics.rateLimitPauseSeconds.inc({ account, source }, delayMs / 1000);
    await worker().rateLimit(delayMs);
    throw new RateLimitError();
  }

  /**
   * Completes with no return value: the result lives in its marker and on the stream, so a
   * copy in each retained job's hash would only cost Redis memory.
   */
  return async function processJob(job: Job<JobData>, token?: string): Promise<void> {
    // A job that ran before may have its result already (a crash after emitting it).
    if (job.attemptsStarted > 1 || job.data.state !== undefined) {
      const earlier = await deps.results.get(job.id as string);
      if (earlier) {
        if (earlier.result !== "succeeded") throw deadLetter(earlier);
        return;
      }
    }
    const parsed = validate(JobEnvelopeSchema, job.data?.envelope);
    if (!parsed.success) {
      const raw = (job.data?.envelope ?? {}) as unknown as Record<string, unknown>;
      const envelope = {
        kind: String(raw.kind ?? "unknown"),
        account: String(raw.account ?? ""),
        idempotencyKey: String(raw.idempotencyKey ?? ""),
      } as unknown as JobEnvelope;
      return finish(job, envelope, {
        result: "rejected",
        code: "validation_error",
        message: formatFieldIssues(parsed.issues),
      });
    }
    const envelope = parsed.data as JobEnvelope;
    const account = deps.accounts.get(envelope.account);
    const client = deps.clients.get(envelope.account);
    if (!account || !client) {
      return finish(job, envelope, {
        result: "rejected",
        code: "unknown_account",
        message: `account: no account is configured with alias "${envelope.account}"`,
      });
    }
    const spec = JOB_KINDS[envelope.kind];
    const state: JobState = job.data.state ?? { phase: "submit" };
    const log = {
      jobId: job.id,
      key: envelope.idempotencyKey,
      kind: envelope.kind,
      account: envelope.account,
      attempt: job.attemptsMade + 1,
    };

    // Confirming a PENDING answer, or waiting on a request the provider still holds, ends here.
    const waitedMs = Date.now() - (state.pendingSince ?? Date.now());
    if (state.phase !== "submit" && waitedMs > deps.pipeline.confirmDeadlineMs) {
      const confirming = state.phase === "confirm";
      return finish(job, envelope, {
        result: "needs_reconciliation",
        code: confirming ? "confirm_deadline" : "outcome_unknown",
        message: confirming
          ? `still PENDING after ${deps.pipeline.confirmDeadlineMs} ms`
          : `the provider still held the first request after ${deps.pipeline.confirmDeadlineMs} ms`,
        ...(state.upstreamId !== undefined && { upstreamId: state.upstreamId }),
        ...(confirming && { upstreamStatus: "PENDING" }),
      });
    }
    if (!spec.idempotent && state.phase === "submit" && state.sentAt !== undefined) {
      return finish(job, envelope, {
        result: "needs_reconciliation",
        code: "outcome_unknown",
        message: "a run stopped after sending a request that cannot be resent safely",
      });
    }

    // Only a request never sent can be cancelled with its batch.
    const cancellable =
      state.phase === "submit" && state.sentAt === undefined && envelope.batchId !== undefined;
    const slot = await takeSlot(
      envelope.account,
      account.ratePerSecond,
      cancellable ? batchKeys(deps.prefix, envelope.batchId as string).meta : undefined,
    );
    if (slot === "cancelled") {
      return finish(job, envelope, {
        result: "cancelled",
        code: "batch_cancelled",
        message: "the batch was cancelled before this job was sent",
      });
    }

    const firstStartedAt = state.firstStartedAt ?? job.processedOn ?? Date.now();
    if (!spec.idempotent)
      await job.updateData({
        ...job.data,
        state: { ...state, sentAt: Date.now(), firstStartedAt },
      });

    const operation = state.phase === "confirm" ? JOB_KINDS[envelope.kind].lookup : spec.operation;
    const started = performance.now();
    let outcome: Outcome;
    let reading: ReturnType<typeof readAnswer> | undefined;
    try {
      const data = (
        state.phase === "confirm"
          ? await lookUp(client, envelope, state.upstreamId as string)
          : await submit(client, envelope)
      ) as Record<string, unknown>;
      metrics.upstreamRequests.inc({ account: envelope.account, operation, status_class: "2xx" });
      reading = readAnswer(spec.lookup, data);
      outcome = reading.outcome;
    } catch (error) {
      metrics.upstreamRequests.inc({
        account: envelope.account,
        operation,
        status_class: statusClass(error),
      });
      outcome = { type: "error", error };
    } finally {
      metrics.upstreamDuration.observe(
        { account: envelope.account, operation },
        (performance.now() - started) / 1000,
      );
    }

    const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    const action: Action = classify(outcome, {
      phase: state.phase,
      idempotent: spec.idempotent,
      lastAttempt,
    });
    const upstream = {
      ...((reading?.upstreamId ?? state.upstreamId) !== undefined && {
        upstreamId: (reading?.upstreamId ?? state.upstreamId) as string,
      }),
      ...(reading?.upstreamStatus !== undefined && { upstreamStatus: reading.upstreamStatus }),
    };
    switch (action.type) {
      case "succeed":
        return finish(job, envelope, { result: "succeeded", ...upstream });
      case "fail":
        return finish(job, envelope, {
          result: "failed" as ResultKind,
          code: action.code,
          message: action.message,
          ...upstream,
        });
      case "needs_reconciliation":
        return finish(job, envelope, {
          result: "needs_reconciliation",
          code: action.code,
          message: action.message,
          ...upstream,
        });
      case "confirm": {
        const lookups = state.phase === "confirm" ? (state.lookups ?? 0) + 1 : 0;
        const lookupError = outcome.type === "error" ? errorCodeOf(outcome.error) : undefined;
        logger.info(
          {
            ...log,
            outcome: "pending",
            upstreamId: upstream.upstreamId,
            lookups,
            ...(lookupError && { lookupError }),
          },
          "job pending, confirming later",
        );
        return moveLater(
          job,
          token,
          {
            phase: "confirm",
            upstreamId: upstream.upstreamId,
            pendingSince: state.pendingSince ?? Date.now(),
            lookups,
            firstStartedAt,
          },
          confirmDelayMs(lookups),
        );
      }
      case "reconcile":
        logger.warn(
          { ...log, outcome: "reconcile", reason: action.reason },
          "retries exhausted with the outcome unknown; looking it up",
        );
        return moveLater(
          job,
          token,
          {
            phase: "reconcile",
            pendingSince: state.phase === "reconcile" ? state.pendingSince : Date.now(),
            firstStartedAt,
          },
          RECONCILE_DELAY_MS,
        );
      case "rate_limit":
        logger.warn(
          { ...log, outcome: "rate_limited", delayMs: action.delayMs },
          "provider rate limit: account paused",
        );
        return pauseFor(envelope.account, action.delayMs, "upstream");
      case "pause_account":
        await deps.pauses.pause(envelope.account, action.message);
        logger.error(
          { ...log, outcome: "account_paused" },
          "provider refused the account's key: account paused until resumed",
        );
        throw new RateLimitError();
      case "retry": {
        metrics.retries.inc({
          account: envelope.account,
          kind: envelope.kind,
          reason: action.reason,
        });
        logger.warn(
          { ...log, outcome: "retry", reason: action.reason },
          "attempt failed; retrying with the same key",
        );
        // Keeps when processing began; drops a non-idempotent "sent" mark (classify retries those only when never sent).
        if (!spec.idempotent || job.data.state?.firstStartedAt === undefined) {
          await job.updateData({ ...job.data, state: { phase: state.phase, firstStartedAt } });
        }
        throw (outcome as { error: unknown }).error;
      }
    }
  };
}
