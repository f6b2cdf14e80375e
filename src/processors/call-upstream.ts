import { PaymentsError } from "../client/errors.js";
import type { PaymentsClient } from "../client/payments-client.js";
import type { PipelineMetrics } from "../metrics/pipeline-metrics.js";
import { JOB_KINDS } from "../queues/job-kinds.js";
import { ATTR, SPAN } from "../tracing/job-spans.js";
import type { Outcome } from "./classify.js";
import { type JobRun, jobFacts } from "./job-run.js";
import type { ProcessorDeps } from "./processor-deps.js";
import { lookUp, type Reading, readAnswer, submit } from "./upstream-call.js";

/** What one request brought back: the outcome to classify, and the answer's reading if it had one. */
export interface Call {
  readonly outcome: Outcome;
  readonly reading: Reading | undefined;
}

const statusClass = (error: unknown): string => {
  const status = (error as { status?: number }).status;
  return status === undefined ? "error" : `${Math.floor(status / 100)}xx`;
};

/**
 * Sends the run's one request (its submission, or a lookup while confirming, in a span of its
 * own) and reads the answer. `sendBy`: written to its connection by then, or not at all (the
 * job's lock may lapse after).
 */
export function callUpstream(
  deps: Pick<ProcessorDeps, "metrics" | "tracer">,
  run: JobRun,
  sendBy: number | undefined,
): Promise<Call> {
  if (run.state.phase !== "confirm") return callOnce(deps.metrics, run, sendBy);
  return deps.tracer.span(SPAN.lookup, jobFacts(run.job), async (notes) => {
    const call = await callOnce(deps.metrics, run, sendBy);
    const { outcome } = call;
    notes.note({
      [ATTR.lookups]: run.state.lookups ?? 0,
      [ATTR.lookupOutcome]: outcome.type === "answer" ? outcome.state : outcome.type,
    });
    return call;
  });
}

/**
 * One request and its reading. A definite answer that cannot be read is "unrecognised", never
 * an error: it must not be sent again.
 */
async function callOnce(
  metrics: PipelineMetrics,
  run: JobRun,
  sendBy: number | undefined,
): Promise<Call> {
  const { client, envelope, state, signal } = run;
  const operation =
    state.phase === "confirm" ? JOB_KINDS[envelope.kind].lookup : run.spec.operation;
  const labels = { account: envelope.account, operation };
  const started = performance.now();
  let answer: Awaited<ReturnType<typeof submit>> | undefined;
  let failure: unknown;
  const options = { signal, sendBy };
  // Only the call is in here: a throw after a 2xx must not pass for "no answer" and resend.
  try {
    answer =
      state.phase === "confirm"
        ? await lookUp(client, envelope, state.upstreamId as string, options)
        : await submit(client, envelope, options);
  } catch (error) {
    metrics.upstreamRequests.inc({ ...labels, status_class: statusClass(error) });
    failure = error;
  } finally {
    metrics.upstreamDuration.observe(labels, (performance.now() - started) / 1000);
  }
  if (answer === undefined)
    return { outcome: { type: "error", error: failure }, reading: undefined };
  return readDefinite(metrics, run, operation, answer);
}

function readDefinite(
  metrics: PipelineMetrics,
  run: JobRun,
  operation: string,
  answer: NonNullable<Awaited<ReturnType<typeof submit>>>,
): Call {
  try {
    metrics.upstreamRequests.inc({ account: run.envelope.account, operation, status_class: "2xx" });
    const { profile, adapter } = run.client;
    const reading = readAnswer(profile, run.envelope.kind, run.state.phase, answer, adapter);
    return { outcome: reading.outcome, reading };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const outcome: Outcome = {
      type: "unrecognised",
      message: `the answer could not be read: ${message}`,
    };
    return { outcome, reading: undefined };
  }
}

/** The workers are shutting down and the request certainly never left: the job goes back. */
export function unsentAtShutdown(client: PaymentsClient, outcome: Outcome): boolean {
  return (
    outcome.type === "error" &&
    client.closed &&
    outcome.error instanceof PaymentsError &&
    !outcome.error.mayHaveReachedServer
  );
}
