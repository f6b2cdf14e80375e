import type { Job, Worker } from "bullmq";
import type { JobData } from "../queues/job-data.js";
import { batchKeys } from "../redis/keys.js";
import { endsCompleted } from "../results/job-result.js";
import { ATTR, SPAN } from "../tracing/job-spans.js";
import { actOnDecision } from "./act-on-decision.js";
import { callUpstream, unsentAtShutdown } from "./call-upstream.js";
import { classify } from "./classify.js";
import { deadLetter, type Ending, finishJob } from "./finish-job.js";
import { handBack, stopIfAborted } from "./job-moves.js";
import { classifyContextOf, type JobRun, jobFacts, markedSent, startRun } from "./job-run.js";
import { holdForOutflow } from "./outflow-hold.js";
import type { ProcessorDeps } from "./processor-deps.js";
import {
  holdKeyOf,
  type SendSlot,
  type SlotAnswer,
  SlotTaker,
  slotRequestOf,
} from "./take-slot.js";
import { checkJob, earlierResult } from "./validate-job.js";
import { cancelledEnding, holdForWork } from "./work-hold.js";

const STOPPED_AFTER_SEND: Ending = {
  result: "needs_reconciliation",
  code: "outcome_unknown",
  message: "a run stopped after sending a request that cannot be resent safely",
};

const isSend = (slot: SlotAnswer): slot is SendSlot => typeof slot === "object" && "send" in slot;

/** The gate's answer as a trace notes it. */
const gateNote = (slot: SlotAnswer): string =>
  isSend(slot) ? "send" : typeof slot === "object" ? "held" : slot;

/**
 * The gate gave no slot: the job's batch (or its own hold) holds it, or it ends (cancelled, or
 * sent before).
 */
async function noSlot(
  deps: ProcessorDeps,
  run: JobRun,
  slot: Exclude<SlotAnswer, SendSlot>,
): Promise<void> {
  const { job, token, envelope } = run;
  const holdKey = holdKeyOf(envelope, job.id as string, deps.keyspace);
  if (typeof slot === "object" && "outflowHeld" in slot)
    return holdForOutflow(deps, run, slot.outflowHeld);
  if (typeof slot === "object") {
    const heldSet =
      envelope.batchId === undefined
        ? undefined
        : batchKeys(deps.keyspace, envelope.account, envelope.batchId).held;
    return holdForWork(deps.holds, { holdKey, heldSet }, job, token, slot.heldMs);
  }
  const ending =
    slot === "already_sent"
      ? STOPPED_AFTER_SEND
      : await cancelledEnding(deps.holds, holdKey, envelope, run.sentEarlier);
  return finishJob(deps, job, envelope, ending);
}

/**
 * The BullMQ processor of an account queue. `worker()` is the worker it runs in. A run: check
 * the job, take a slot of the account's rate, call the provider, classify the outcome, act on
 * it; every step that ends the job finishes it with exactly one result.
 */
export function createJobProcessor(deps: ProcessorDeps, worker: () => Worker) {
  const slots = new SlotTaker(deps, worker);

  /**
   * Three parameters, so that BullMQ hands over the job's abort signal: it fires when this
   * worker could not renew the job's lock (run-workers.ts), and the job stops at once.
   */
  return async function processJob(
    job: Job<JobData>,
    token: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const facts = jobFacts(job);
    // BullMQ's span of this attempt says which job it is; the first says how long it waited.
    deps.tracer.annotate(facts, { [ATTR.phase]: job.data?.state?.phase ?? "submit" });
    if (job.attemptsStarted <= 1)
      deps.tracer.waited(
        facts,
        job.timestamp,
        job.processedOn ?? Date.now(),
        job.opts.telemetry?.metadata,
      );
    stopIfAborted(job, signal);
    const earlier = await earlierResult(deps.results, job);
    // A run that recorded the result and died before BullMQ moved the job: it ends as then,
    // so a cancelled job never reaches the dead letters, where a replay would send it.
    if (earlier) {
      if (!endsCompleted(earlier.result)) throw deadLetter(earlier);
      return;
    }
    const checked = checkJob(deps, job);
    if (!checked.valid) return finishJob(deps, job, checked.envelope, checked.ending);
    const run = startRun(job, token, signal, checked);
    if (markedSent(run)) return finishJob(deps, job, run.envelope, STOPPED_AFTER_SEND);

    const slot = await deps.tracer.span(SPAN.rateGate, facts, async (notes) => {
      const answer = await slots.take(
        job,
        signal,
        slotRequestOf(run, deps.keyspace, deps.outflow.velocity),
      );
      notes.note({ [ATTR.gateAnswer]: gateNote(answer) });
      return answer;
    });
    if (!isSend(slot)) return noSlot(deps, run, slot);

    const firstStartedAt = run.state.firstStartedAt ?? job.processedOn ?? Date.now();
    const call = await callUpstream(deps, run, slot.sendBy);
    if (unsentAtShutdown(run.client, call.outcome)) return handBack(deps, run);
    // This worker lost the job while its request was out: the job's new owner decides, and
    // nothing of this run is recorded. Not even a refusal: a payout refused now may be accepted
    // under the same key when the new owner sends it again, and a recorded "failed" would win.
    if (call.outcome.type === "error") stopIfAborted(job, signal);

    const action = classify(call.outcome, classifyContextOf(run, deps.outflow.fundsHold));
    deps.tracer.annotate(facts, { [ATTR.action]: action.type });
    return actOnDecision(deps, worker, run, { ...call, action, firstStartedAt });
  };
}
