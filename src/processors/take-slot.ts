import type { Job, Worker } from "bullmq";
import type { VelocityLimits } from "../config/load-config.js";
import { outflowCheckOf } from "../outflow/outflow-check.js";
import type { JobEnvelope } from "../queues/job-envelope.js";
import type { Lane } from "../queues/lanes.js";
import { laneOfPriority } from "../queues/lanes.js";
import { lockKeyOf } from "../redis/bullmq-internals.js";
import { batchKeys, jobHoldKey, type Keyspace } from "../redis/keys.js";
import { backToWait, pauseWorker, sleep, stopIfAborted } from "./job-moves.js";
import type { JobRun } from "./job-run.js";
import { LockLostError } from "./locked-writes.js";
import type { ProcessorDeps } from "./processor-deps.js";
import type { OutflowHold, Reservation, SlotOptions } from "./rate-gate.js";

/**
 * A process's first requests leave late (cold code, new connections), so each takes two slots
 * and its lateness cannot crowd the second after it. Four were enough in measurements: at
 * R = 40 the first second's spans kept 150 ms or more to spare, and the tightest span of the
 * run came later; one per concurrent job cost 4% of the rate there.
 */
const COLD_REQUESTS = 4;
/** Slots a request may take before a late-running worker hands its job back. */
const SLOT_TRIES = 3;

/** What a request asks of the gate. */
export interface SlotRequest {
  readonly account: string;
  readonly perSecond: number;
  readonly holdKey: string | undefined;
  readonly options: SlotOptions;
}

/**
 * A request leaves at least this long before its job's lock could lapse. Writing it takes
 * microseconds after the last check; the spare covers the two clocks' rates and a slow write.
 */
const LOCK_SPARE_MS = 100;

/**
 * Send now, written to its connection by `sendBy` (this process's clock) or not at all: until
 * then the job's lock, as the gate last found it, is surely still this worker's. Undefined for a
 * request without a lock.
 */
export interface SendSlot {
  readonly send: true;
  readonly sendBy: number | undefined;
}

/**
 * Send now; or the job ends: it (or its batch) was cancelled, or its request already left;
 * or its hold (its batch's, or its own) keeps it (`heldMs`, 0 until it is approved); or its
 * currency's lane or a velocity limit holds it (a payout).
 */
export type SlotAnswer =
  | SendSlot
  | "cancelled"
  | "already_sent"
  | { readonly heldMs: number }
  | { readonly outflowHeld: OutflowHold };

type SlotDeps = Pick<
  ProcessorDeps,
  "gate" | "writes" | "wakes" | "metrics" | "pipeline" | "logger"
>;

/** Where the gate reads what holds the job: its batch's meta, or its own hold. */
export function holdKeyOf(envelope: JobEnvelope, jobId: string, space: Keyspace): string {
  return envelope.batchId === undefined
    ? jobHoldKey(space, envelope.account, jobId)
    : batchKeys(space, envelope.account, envelope.batchId).meta;
}

/**
 * What a run asks of the gate: its account's rate, its lane, its lock, its "sent" record and,
 * for a payout's submission, its outflow checks.
 */
export function slotRequestOf(run: JobRun, space: Keyspace, velocity: VelocityLimits): SlotRequest {
  const { job, token, envelope, state, sentKey } = run;
  const outflow =
    state.phase === "submit" ? outflowCheckOf(envelope, job.id as string, velocity) : undefined;
  // A submission keeps the lane it was enqueued in; confirming and reconciling are lookups.
  const lane: Lane = state.phase === "submit" ? laneOfPriority(job.priority) : "lookup";
  // Only a request never sent can be held or cancelled (the gate checks "sent" first).
  return {
    account: envelope.account,
    perSecond: run.account.ratePerSecond,
    holdKey: state.phase === "submit" ? holdKeyOf(envelope, job.id as string, space) : undefined,
    options: {
      lane,
      queueKey: job.queueQualifiedName,
      ...(token !== undefined && { lock: { key: lockKeyOf(job), token } }),
      ...(sentKey !== undefined && { sentKey }),
      ...(outflow !== undefined && { outflow }),
    },
  };
}

/** A slot the gate reserved: its time on Redis's clock and on this process's. */
type ReservedSlot = Extract<Reservation, { readonly reserved: true }>;

/** An operator's pause holds a running job back this long before it asks again. */
const HELD_RECHECK_MS = 1_000;

/** Takes slots of the accounts' rates for one worker, counting its cold first requests. */
export class SlotTaker {
  readonly #deps: SlotDeps;
  readonly #worker: () => Worker;
  #coldLeft = COLD_REQUESTS;

  constructor(deps: SlotDeps, worker: () => Worker) {
    this.#deps = deps;
    this.#worker = worker;
  }

  /**
   * Waits for this request's slot of the account's rate. The slot is kept on Redis's clock; the
   * gate maps it to this process's (`leaveAt`, never before the slot on Redis's clock), and a
   * request leaves then, or gives the slot up if it could only leave more than half the margin
   * later: sending late could crowd the second that follows. An unused slot costs capacity, never
   * safety. A slot reserved ahead is cleared before the request leaves (a 429 or a lost lock may
   * have come meanwhile), the clearance sent a round trip early so that its answer is back in
   * time; a request that records "sent" is always cleared, as clearance records it. The last
   * of these checks says how long the job's lock lives: the request must be written by then
   * (`sendBy`), or it is not written at all (a process stopped between the check and the write).
   */
  async take(job: Job, signal: AbortSignal | undefined, request: SlotRequest): Promise<SlotAnswer> {
    const { account, perSecond, holdKey, options } = request;
    let misses = 0;
    for (;;) {
      stopIfAborted(job, signal);
      // Decided before the await: concurrent jobs must not all see the same cold count.
      const weight = this.#coldLeft > 0 ? 2 : 1;
      if (this.#coldLeft > 0) this.#coldLeft -= 1;
      const slot = await this.#deps.gate.reserve(account, perSecond, weight, holdKey, options);
      if (!slot.reserved) {
        if ("cancelled" in slot) return "cancelled";
        if ("alreadySent" in slot) return "already_sent";
        if ("batchHeldMs" in slot) return { heldMs: slot.batchHeldMs };
        if ("outflowHeld" in slot) return { outflowHeld: slot.outflowHeld };
        if ("lockLost" in slot) throw new LockLostError(job.id);
        // A job of another lane waits to be fetched (a lookup or urgent job, or bulk's turn
        // under the cap): this job makes room for it, back at the head of its lane.
        if ("yielded" in slot) return backToWait(job, options.lock?.token);
        if ("held" in slot) return this.#pause(account, HELD_RECHECK_MS);
        if ("pausedMs" in slot) return this.#pause(account, slot.pausedMs);
        // A bulk request asks again early if urgent jobs are enqueued meanwhile: it may have
        // to make room for them.
        if (options.lane === "bulk") await this.#deps.wakes.sleep(account, slot.retryInMs, signal);
        else await sleep(slot.retryInMs, job, signal);
        continue;
      }
      const timing = await this.#leave(job, signal, request, slot);
      if (timing === "taken") continue;
      if (typeof timing === "object") {
        stopIfAborted(job, signal);
        const { lockUntil } = timing;
        return {
          send: true,
          sendBy: lockUntil === undefined ? undefined : lockUntil - LOCK_SPARE_MS,
        };
      }
      this.#deps.metrics.rateSlotsMissed.inc({ account });
      misses += 1;
      // Late every time: this process is overloaded; hand the job back instead of crowding the
      // rate (as a bulk job makes room).
      if (misses >= SLOT_TRIES) return backToWait(job, options.lock?.token);
    }
  }

  /**
   * Waits for the slot, clearing it on the way when the gate says so; whether the request can
   * still leave on time, and until when its lock was last found to live; "taken" when a lookup
   * or urgent request took this bulk slot (not a missed one: ask again).
   */
  async #leave(
    job: Job,
    signal: AbortSignal | undefined,
    request: SlotRequest,
    slot: ReservedSlot,
  ): Promise<{ readonly lockUntil: number | undefined } | "late" | "taken"> {
    const { options } = request;
    const tolerance = this.#deps.pipeline.rateWindowMarginMs / 2;
    let lockUntil = slot.lockUntil;
    if (slot.clearAt !== undefined) {
      await sleepUntil(slot.clearAt, job, signal);
      const cleared = await this.#clear(job, request, slot, tolerance);
      if (typeof cleared !== "object") return cleared;
      lockUntil = cleared.lockUntil;
    }
    await sleepUntil(slot.leaveAt, job, signal);
    if (performance.now() - slot.leaveAt <= tolerance) return { lockUntil };
    // Held up after clearance (a stopped process): not sent, so not recorded as sent.
    if (slot.clearAt !== undefined && options.sentKey !== undefined)
      await this.#deps.writes.write(job, options.lock?.token, job.data, {
        dropSent: options.sentKey,
      });
    return "late";
  }

  /**
   * The gate's clearance of a slot reserved ahead or of a request that records "sent": still
   * clear to send, or why not.
   */
  async #clear(
    job: Job,
    request: SlotRequest,
    slot: ReservedSlot,
    tolerance: number,
  ): Promise<{ readonly lockUntil?: number } | "late" | "taken"> {
    const { account, options } = request;
    // Its answer could not come back in time: not worth a round trip.
    if (performance.now() + this.#deps.gate.roundTripMs() - slot.leaveAt > tolerance) return "late";
    const bulk = options.lane === "bulk";
    const clearance = await this.#deps.gate.clear(account, slot.at, bulk, options);
    if (clearance.clear) return clearance;
    if ("lockLost" in clearance) throw new LockLostError(job.id);
    if ("held" in clearance) return this.#pause(account, HELD_RECHECK_MS);
    if ("pausedMs" in clearance) return this.#pause(account, clearance.pausedMs);
    if ("taken" in clearance) return "taken";
    if ("notReplicated" in clearance && options.sentKey !== undefined) {
      this.#deps.logger.warn(
        { jobId: job.id, account },
        "Redis replicas did not acknowledge the request's sent record in time; it is not sent now",
      );
      // Not on the replicas: not sent, so not recorded as sent.
      await this.#deps.writes.write(job, options.lock?.token, job.data, {
        dropSent: options.sentKey,
      });
    }
    return "late";
  }

  /** A pause another process stored (or an operator's hold): counted where it began. */
  #pause(account: string, delayMs: number): Promise<never> {
    return pauseWorker(this.#worker, this.#deps.metrics, account, delayMs, undefined);
  }
}

/**
 * Waits until `at` on this process's clock. Under a millisecond early is within the margin; a
 * timer would cost more than it saves. Rounded up, so a timer never fires before `at`.
 */
async function sleepUntil(at: number, job: Job, signal: AbortSignal | undefined): Promise<void> {
  const ms = at - performance.now();
  if (ms >= 1) await sleep(Math.ceil(ms), job, signal);
}
