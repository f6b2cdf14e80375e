import { jobIdFor } from "../queues/idempotency-key.js";
import { CANCELLED_BY, CANCELLED_MAYBE_SENT } from "../queues/work-holds.js";
import type { ReportLine } from "../results/report-line.js";
import type { ResultCode } from "../results/result-codes.js";
import { BatchDecisionError } from "./batch-errors.js";
import { BatchPart, type BatchParts, SEND_CHUNK } from "./batch-parts.js";
import type { BatchQueries } from "./batch-queries.js";
import type { CancelReport, DecisionReport } from "./batch-reports.js";
import { isCancellable } from "./batch-store.js";
import { rowResult } from "./row-result.js";
import type { Cleared } from "./unsealed-batches.js";

/** What is decided on a batch after its submission: cancel, approve, reject. */
export class BatchDecisions extends BatchPart {
  readonly #queries: BatchQueries;

  constructor(parts: BatchParts, queries: BatchQueries) {
    super(parts);
    this.#queries = queries;
  }

  /**
   * Cancels a batch: marks it cancelled (a job not yet sent then never is), removes its
   * waiting and delayed jobs, and records `cancelled` as their result.
   */
  async cancel(account: string, batchId: string): Promise<CancelReport> {
    const before = await this.store.cancel(account, batchId);
    const unsealed =
      before === "validating" && (await this.store.meta(account, batchId)).sealBy !== undefined;
    const report = unsealed
      ? await this.#cancelUnsealed(account, batchId)
      : await this.#cancelJobs(account, batchId, CANCELLED_BY.batch.cancelled);
    // Reported cancelled only once a failover would keep it so: a lost cancel would pay.
    await this.replicas.ensure(account);
    return report;
  }

  /**
   * A batch cancelled before its submission sealed it: cleared as an abandoned one is, none of
   * its jobs having been sent. While a submission still holds it, its rows end as their jobs
   * come up (or the sweep clears it).
   */
  async #cancelUnsealed(account: string, batchId: string): Promise<CancelReport> {
    const cleared: Cleared | undefined = await this.unsealed.clear(account, batchId);
    const status = await this.#queries.status(account, batchId);
    return {
      batchId,
      cancelled: cleared?.cancelled ?? 0,
      inFlight: cleared?.inFlight ?? status.accepted - status.finished,
      finished: cleared?.finished ?? status.finished,
      status,
    };
  }

  /**
   * Approves a batch awaiting approval, as `approver` (a token's name: not the one that
   * submitted it), and releases its jobs: at once, or at its `notBefore`.
   */
  async approve(account: string, batchId: string, approver: string): Promise<DecisionReport> {
    let again = false;
    try {
      await this.store.decide(account, batchId, "approve", approver);
    } catch (error) {
      const release = await this.#releaseState(account, batchId);
      if (!(error instanceof BatchDecisionError && release !== "none")) throw error;
      // Approved and released already: nothing to do. A second release would pull forward the
      // jobs waiting in the delayed set for other reasons (a confirmation lookup, a retry).
      if (release === "done")
        return { batchId, jobs: 0, status: await this.#queries.status(account, batchId) };
      again = true;
    }
    const released = await this.#release(account, batchId, again);
    await this.store.markReleased(account, batchId);
    return { batchId, jobs: released, status: await this.#queries.status(account, batchId) };
  }

  /**
   * Releases the approved batch's queued jobs: at once, or at its `notBefore`. `again` (the
   * release of an earlier approval stopped half-way, a crash): only the jobs that never ran a
   * request, the ones it did not get to; one that ran since waits where it is.
   */
  async #release(account: string, batchId: string, again: boolean): Promise<number> {
    const status = await this.#queries.status(account, batchId);
    const delayMs = Math.max(0, Date.parse(status.notBefore ?? "") - Date.now() || 0);
    let released = 0;
    const pending: ReportLine[] = [];
    const releaseAll = async () => {
      const moved = await Promise.all(
        pending.map((line) =>
          this.options.producer.release(
            account,
            jobIdFor(account, line.idempotencyKey as string),
            delayMs,
            { unlessRun: again },
          ),
        ),
      );
      released += moved.filter(Boolean).length;
      pending.length = 0;
    };
    for await (const line of this.#queries.report(account, batchId)) {
      if (line.result !== "queued" || line.idempotencyKey === undefined) continue;
      pending.push(line);
      if (pending.length >= SEND_CHUNK) await releaseAll();
    }
    await releaseAll();
    return released;
  }

  /**
   * Rejects a batch awaiting approval, as `approver`: it is cancelled, and every job ends
   * `cancelled` with code `batch_rejected`.
   */
  async reject(account: string, batchId: string, approver: string): Promise<DecisionReport> {
    await this.store.decide(account, batchId, "reject", approver);
    const report = await this.#cancelJobs(account, batchId, CANCELLED_BY.batch.rejected);
    return { batchId, jobs: report.cancelled, status: report.status };
  }

  /**
   * Where the release of an approved batch stands: `none` (not approved, or finished: nothing
   * to release), `done` (every job was released), `cut_short` (approved, but the release did
   * not finish: a crash, or an approval recorded by an earlier release, which kept no mark).
   */
  async #releaseState(account: string, batchId: string): Promise<"none" | "done" | "cut_short"> {
    const status = await this.#queries.status(account, batchId);
    // Approved, it is past validation and approval: cancellable means not finished yet.
    if (status.approval?.state !== "approved" || !isCancellable(status.state)) return "none";
    return (await this.store.released(account, batchId)) ? "done" : "cut_short";
  }

  /** Removes the batch's jobs that no worker holds, recording `ending` as their result. */
  async #cancelJobs(
    account: string,
    batchId: string,
    ending: { readonly code: ResultCode; readonly message: string },
  ): Promise<CancelReport> {
    const status = await this.#queries.status(account, batchId);
    let cancelled = 0;
    let inFlight = 0;
    let finished = 0;
    for await (const line of this.#queries.report(account, batchId)) {
      if (
        line.idempotencyKey === undefined ||
        line.result === "invalid" ||
        line.result === "duplicate"
      )
        continue;
      if (line.result !== "queued") {
        finished += 1;
        continue;
      }
      const jobId = jobIdFor(status.account, line.idempotencyKey);
      // Removed only if no worker holds it and its request has not left: then it is never sent.
      const withdrawal = await this.options.producer.withdraw(status.account, jobId);
      if (withdrawal === "removed" || withdrawal === "removed_maybe_sent") {
        await this.options.results.emit(
          rowResult(
            status,
            status.createdAt,
            { ...line, idempotencyKey: line.idempotencyKey },
            withdrawal === "removed"
              ? { result: "cancelled", ...ending }
              : { result: "needs_reconciliation", ...CANCELLED_MAYBE_SENT.batch },
          ),
        );
        // One that may have been sent ends needs_reconciliation: finished, not cancelled.
        if (withdrawal === "removed") cancelled += 1;
        else finished += 1;
      } else inFlight += 1;
    }
    return {
      batchId,
      cancelled,
      inFlight,
      finished,
      status: await this.#queries.status(account, batchId),
    };
  }
}
