import type { RetryReason } from "./classify.js";
import { mayHaveReached } from "./classify.js";
import type { Decision } from "./decision.js";
import type { JobRun } from "./job-run.js";
import type { ProcessorDeps } from "./processor-deps.js";

/**
 * Fails this attempt with its error, so that BullMQ runs the job again after its backoff: the
 * one layer that retries. The next attempt sends the same idempotency key.
 */
export async function retryWithSameKey(
  deps: Pick<ProcessorDeps, "writes" | "metrics" | "logger">,
  run: JobRun,
  decision: Decision,
  reason: RetryReason,
): Promise<never> {
  const { job, token, envelope, state, sentKey } = run;
  deps.metrics.retries.inc({ account: envelope.account, kind: envelope.kind, reason });
  deps.logger.warn(
    { ...run.log, outcome: "retry", reason },
    "attempt failed; retrying with the same key",
  );
  // Keeps when processing began and whether an attempt may have reached the provider;
  // drops a non-idempotent "sent" record (classify retries those only when never sent).
  const possiblySent = state.possiblySent === true || mayHaveReached(decision.outcome);
  if (
    sentKey !== undefined ||
    job.data.state?.firstStartedAt === undefined ||
    possiblySent !== (state.possiblySent === true)
  ) {
    const { firstStartedAt } = decision;
    await deps.writes.write(
      job,
      token,
      {
        ...job.data,
        state: { phase: state.phase, firstStartedAt, ...(possiblySent && { possiblySent }) },
      },
      sentKey === undefined ? {} : { dropSent: sentKey },
    );
  }
  throw (decision.outcome as { error: unknown }).error;
}
