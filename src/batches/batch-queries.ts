import { RESULT_KINDS, type ResultKind } from "../results/job-result.js";
import type { ReportLine } from "../results/report-line.js";
import { BatchAmbiguousError, BatchNotFoundError } from "./batch-errors.js";
import type { BatchKind } from "./batch-kinds.js";
import { BatchPart, CHUNK } from "./batch-parts.js";
import { repeatsOfMeta } from "./batch-repeats.js";
import type { BatchStatus } from "./batch-reports.js";
import type { BatchState } from "./batch-store.js";
import { totalsOf } from "./batch-totals.js";

/** What a batch is and holds: its status, the batches of accounts, its report. */
export class BatchQueries extends BatchPart {
  /** The state and counters of the account's batch; BatchNotFoundError if it has none. */
  async status(account: string, batchId: string): Promise<BatchStatus> {
    const meta = await this.store.meta(account, batchId);
    if (meta.id === undefined) throw new BatchNotFoundError(batchId);
    const n = (field: string) => Number(meta[field] ?? 0);
    let state = meta.state as BatchState;
    let accepted = n("accepted");
    // Validating with no submission holding it: the submission stopped (failed, or its
    // process died). Its rows enqueued so far are those whose job exists.
    if (state === "validating" && !(await this.store.leaseHeld(account, batchId))) {
      state = "submission_failed";
      accepted = (await this.unsealed.enqueuedRows(account, batchId)).enqueued.length;
    }
    const finished = n("done");
    const createdAt = meta.createdAt as string;
    const end = meta.finishedAt ? Date.parse(meta.finishedAt) : Date.now();
    return {
      batchId,
      account: meta.account as string,
      kind: meta.kind as BatchKind,
      state,
      rows: n("rows"),
      accepted,
      invalid: n("invalid"),
      duplicates: n("duplicates"),
      finished,
      counts: Object.fromEntries(RESULT_KINDS.map((k) => [k, n(`n:${k}`)])) as Record<
        ResultKind,
        number
      >,
      progress: accepted === 0 ? 1 : finished / accepted,
      createdAt,
      startedAt: meta.startedAt,
      finishedAt: meta.finishedAt,
      cancelledAt: meta.cancelledAt,
      cancelReason: meta.cancelReason,
      durationMs: Math.max(0, end - Date.parse(createdAt)),
      totals: totalsOf(meta),
      notBefore: meta.notBefore,
      submittedBy: meta.submittedBy,
      resumeBy:
        meta.sealBy !== undefined && (state === "validating" || state === "submission_failed")
          ? new Date(Number(meta.sealBy)).toISOString()
          : undefined,
      repeats: repeatsOfMeta(meta),
      approval: approvalOf(meta),
    };
  }

  /**
   * The newest batches of `accounts` in one of `states` (any when empty), at most `limit`;
   * `more` when others may match.
   */
  async list(
    accounts: readonly string[],
    states: readonly BatchState[],
    limit: number,
  ): Promise<{ batches: BatchStatus[]; more: boolean }> {
    // `submission_failed` is reported, never stored: such a batch is stored as validating.
    const stored = states.includes("submission_failed")
      ? [...states, "validating" as const]
      : states;
    const page = await this.index.list(accounts, stored, limit);
    const statuses = await Promise.all(
      page.batches.map((b) =>
        this.status(b.account, b.batchId).catch((error: unknown) => {
          // Gone between the index and its status: a refused submission deleted it.
          if (error instanceof BatchNotFoundError) return undefined;
          throw error;
        }),
      ),
    );
    const batches = statuses.filter(
      (s) => s !== undefined && (states.length === 0 || states.includes(s.state)),
    ) as BatchStatus[];
    return { batches, more: page.more };
  }

  /**
   * The account whose batch `batchId` is, among `accounts` (the caller's, or the one it named):
   * BatchNotFoundError if none has it (another account's batch is never found), and
   * BatchAmbiguousError if several do.
   */
  async accountOf(batchId: string, accounts: readonly string[]): Promise<string> {
    const found = await this.accountsWith(batchId, accounts);
    if (found.length === 0) throw new BatchNotFoundError(batchId);
    if (found.length > 1) throw new BatchAmbiguousError(batchId, found);
    return found[0] as string;
  }

  /** Which of `accounts` have a batch `batchId`, in their order. */
  async accountsWith(batchId: string, accounts: readonly string[]): Promise<string[]> {
    // One command an account: on a cluster the accounts' keys lie in different slots, which
    // one pipeline cannot span.
    const found = await Promise.all(
      accounts.map((account) => this.redis.exists(this.store.keys(account, batchId).meta)),
    );
    return accounts.filter((_, i) => found[i] === 1);
  }

  /** Every row's report line, in row order, read in chunks. */
  async *report(account: string, batchId: string): AsyncGenerator<ReportLine> {
    yield* await this.openReport(account, batchId);
  }

  /**
   * The report's lines, as `report`, but the batch is looked up first: BatchNotFoundError is
   * thrown here, before a caller starts to stream the lines.
   */
  async openReport(account: string, batchId: string): Promise<AsyncGenerator<ReportLine>> {
    const { rows } = await this.status(account, batchId);
    return this.#reportLines(account, batchId, rows);
  }

  /** Every report line of the batch, its row count read from its meta (not its status). */
  async *allLines(account: string, batchId: string): AsyncGenerator<ReportLine> {
    const rows = Number(await this.redis.hget(this.store.keys(account, batchId).meta, "rows"));
    yield* this.#reportLines(account, batchId, rows || 0);
  }

  async *#reportLines(account: string, batchId: string, rows: number): AsyncGenerator<ReportLine> {
    const key = this.store.keys(account, batchId).rows;
    for (let start = 1; start <= rows; start += CHUNK) {
      const fields = Array.from({ length: Math.min(CHUNK, rows - start + 1) }, (_, i) =>
        String(start + i),
      );
      for (const line of await this.redis.hmget(key, ...fields))
        if (line !== null) yield JSON.parse(line) as ReportLine;
    }
  }
}

function approvalOf(meta: Readonly<Record<string, string>>): BatchStatus["approval"] {
  const state = meta.approval as NonNullable<BatchStatus["approval"]>["state"] | undefined;
  if (state === undefined) return undefined;
  return {
    state,
    expiresAt: meta.approvalExpiresAt,
    decidedBy: meta.approvedBy ?? meta.rejectedBy,
    decidedAt: meta.approvedAt ?? meta.rejectedAt,
  };
}
