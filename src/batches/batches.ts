import { createHash, randomUUID } from "node:crypto";
import type { ApprovalPolicy } from "../config/load-config.js";
import type { BalanceSource } from "../provider/read-balances.js";
import { EnqueueValidationError } from "../queues/enqueue-error.js";
import { deriveIdempotencyKey, jobIdFor } from "../queues/idempotency-key.js";
import type { JobEnvelope } from "../queues/job-envelope.js";
import { APPROVAL_HOLD_MS, MAX_SCHEDULE_AHEAD_MS } from "../queues/job-holds.js";
import { type RowMoney, rowMoney } from "../queues/job-money.js";
import type { JobPriority } from "../queues/lanes.js";
import type { Producer } from "../queues/producer.js";
import { CANCELLED_BY, CANCELLED_MAYBE_SENT } from "../queues/work-holds.js";
import type { RedisConnection } from "../redis/connection.js";
import { batchReferencesKey, keyspace } from "../redis/keys.js";
import { ReplicaWaits } from "../redis/replica-waits.js";
import { CLAIM_BATCH_REFERENCES } from "../redis/scripts/lua-scripts.js";
import { defineScripts } from "../redis/scripts/script.js";
import { RESULT_KINDS, type ResultKind } from "../results/job-result.js";
import type { ReportLine } from "../results/report-line.js";
import type { ResultCode } from "../results/result-codes.js";
import type { ResultsStore } from "../results/results-store.js";
import { approvalNeeded } from "./approval-policy.js";
import {
  BatchAmbiguousError,
  BatchDecisionError,
  BatchIdReusedError,
  BatchNotFoundError,
  BatchOptionError,
  BatchRefusedError,
  BatchSubmissionBusyError,
  type RowIssue,
} from "./batch-errors.js";
import { BatchIndex } from "./batch-index.js";
import { BATCH_KINDS, type BatchKind } from "./batch-kinds.js";
import {
  batchRepeats,
  type RepeatReport,
  repeatIssue,
  repeatMetaFields,
  repeatReport,
  repeatsOfMeta,
} from "./batch-repeats.js";
import type { RowSource } from "./batch-rows.js";
import { type BatchState, BatchStore, isCancellable } from "./batch-store.js";
import {
  type BatchTotals,
  refusedTotalIncrements,
  requestedTotalFields,
  totalsOf,
} from "./batch-totals.js";
import { checkFunds, type FundsReport, stableNeeds } from "./funds-check.js";
import { HeldRows } from "./held-rows.js";
import { KEY_REUSED, keyReuseIssue, keyReuseIssues } from "./key-reuse.js";
import { columnOf, rowInput } from "./row-input.js";
import { rowResult } from "./row-result.js";
import { SubmissionLease } from "./submission-lease.js";
import { type Cleared, UnsealedBatches } from "./unsealed-batches.js";

export interface BatchStatus {
  readonly batchId: string;
  readonly account: string;
  readonly kind: BatchKind;
  readonly state: BatchState;
  /** Rows in the file. */
  readonly rows: number;
  /**
   * Rows enqueued; the others were invalid or duplicates (accepted with allowPartial). While
   * `validating`, every row the submission is enqueueing; `submission_failed`, the rows it
   * enqueued before it stopped.
   */
  readonly accepted: number;
  readonly invalid: number;
  readonly duplicates: number;
  /** Accepted rows with a terminal result. */
  readonly finished: number;
  readonly counts: Readonly<Record<ResultKind, number>>;
  /** finished / accepted, 0 to 1. */
  readonly progress: number;
  readonly createdAt: string;
  readonly startedAt: string | undefined;
  readonly finishedAt: string | undefined;
  readonly cancelledAt: string | undefined;
  /** Why it was cancelled: `cancelled` (an operator), `rejected`, `approval_expired`. */
  readonly cancelReason: string | undefined;
  /** From creation to the last result (or to now while running). */
  readonly durationMs: number;
  /** Per currency of its rows: requested, pending, and each result's rows and amount. */
  readonly totals: BatchTotals;
  /** Nothing is sent before this instant (ISO time), when the batch was given one. */
  readonly notBefore: string | undefined;
  /** The token (or `cli`) that submitted it. */
  readonly submittedBy: string | undefined;
  /**
   * While unsealed (`validating`, `submission_failed`): the instant after which the batch, if
   * no submission holds it then, is cancelled (`submission_abandoned`). Resubmit the same
   * file before it to resume the submission.
   */
  readonly resumeBy: string | undefined;
  /**
   * The rows whose payment repeated another one when it was submitted (the first 1,000, and
   * how many), when any did: what its approvers weigh.
   */
  readonly repeats: RepeatReport | undefined;
  /** Its approval, when its account's policy asked for one. */
  readonly approval:
    | {
        readonly state: "pending" | "approved" | "rejected" | "expired";
        readonly expiresAt: string | undefined;
        readonly decidedBy: string | undefined;
        readonly decidedAt: string | undefined;
      }
    | undefined;
}

export interface SubmitOptions {
  readonly account: string;
  readonly kind: BatchKind;
  readonly source: RowSource;
  /** Validate and report only; nothing is written. */
  readonly dryRun?: boolean;
  /** Enqueue the valid rows and report the others, instead of refusing the batch whole. */
  readonly allowPartial?: boolean;
  /** Default: derived from account, kind and content, so the same file is the same batch. */
  readonly batchId?: string;
  /** Stops waiting for another submission of the batch (the client went away). */
  readonly signal?: AbortSignal;
  /** Nothing of the batch is sent before this instant; default: as soon as it may. */
  readonly notBefore?: Date;
  /** Who submits it (a token's name, or `cli`): the one who may not approve it. */
  readonly submittedBy?: string;
  /**
   * The lane of its jobs: `bulk` (the default), or `urgent` for a few rows that must not wait
   * behind a payroll on the account (docs/pipeline.md, "Lanes").
   */
  readonly priority?: JobPriority;
}

export interface SubmitReport {
  readonly batchId: string;
  readonly dryRun: boolean;
  /** False when this batch had been submitted before: nothing new was enqueued. */
  readonly created: boolean;
  readonly rows: number;
  readonly accepted: number;
  readonly invalid: number;
  readonly duplicates: number;
  /** Every invalid or duplicate row, with its column and rule. */
  readonly issues: readonly RowIssue[];
  /**
   * The rows whose payment repeats another one (paid or queued under another key in the
   * window, or an earlier row of the file), and the account's policy (docs/safety.md).
   */
  readonly repeats: RepeatReport;
  /**
   * On a dry run of stable payouts: what each sub-account, currency and network needs against
   * the balance the provider reports (docs/safety.md); absent otherwise.
   */
  readonly funds?: FundsReport | undefined;
  /** The batch's status; absent on a dry run. */
  readonly status: BatchStatus | undefined;
}

export interface CancelReport {
  readonly batchId: string;
  /** Jobs removed before they were sent: their result is `cancelled`. */
  readonly cancelled: number;
  /**
   * Jobs being processed at the time, or confirming a request that left: each ends `cancelled`
   * if its request had not left yet, else as the provider says.
   */
  readonly inFlight: number;
  /**
   * Jobs that already had their terminal result, and those removed whose earlier attempt may
   * have reached the provider: `needs_reconciliation`, code `cancelled_maybe_sent`.
   */
  readonly finished: number;
  readonly status: BatchStatus;
}

export interface BatchesOptions {
  readonly connection: RedisConnection;
  readonly prefix: string;
  readonly producer: Producer;
  readonly results: ResultsStore;
  /** How long a submission holds its batch without renewing; default SUBMIT_LEASE_MS. */
  readonly submitLeaseMs?: number;
  /** How long a submission waits for another one of the same batch; default SUBMIT_WAIT_MS. */
  readonly submitWaitMs?: number;
  /** Each account's approval policy (config.approvals); an account without one needs none. */
  readonly approvals?: ReadonlyMap<string, ApprovalPolicy>;
  /** Sub-account balances at the provider, for a dry run's funds check; none: "not verified". */
  readonly balances?: BalanceSource | undefined;
}

/** The outcome of a decision on a batch awaiting approval. */
export interface DecisionReport {
  readonly batchId: string;
  /** Jobs released to run (approved), or removed with a `cancelled` result (rejected). */
  readonly jobs: number;
  readonly status: BatchStatus;
}

/** References are checked and claimed, and report lines read, this many per command. */
const CHUNK = 1_000;
/**
 * Accepted rows are enqueued this many per pipeline, with a few pipelines in flight: smaller
 * pipelines of BullMQ's per-job script keep less in the air at once (measured in
 * docs/performance.md).
 */
const SEND_CHUNK = 100;
const SEND_CHUNKS_IN_FLIGHT = 8;
/** Rows are validated before the key (and, unless given, the batch id) is known; both are set at send. */
const PENDING_BATCH_ID = "pending";
const PENDING_KEY = "pending";

/** Accepted rows: the validated request of each, by row and reference. */
type Held = HeldRows<JobEnvelope["request"]>;

/** Where a submission's rows go. */
/**
 * The most rows an urgent batch may have: urgent jobs are served in the order they came, so a
 * single urgent job enqueued after an urgent batch waits behind all its rows.
 */
export const MAX_URGENT_BATCH_ROWS = 100;

interface BatchTarget {
  readonly kind: BatchKind;
  readonly account: string;
  readonly batchId: string;
  /** This submission's token: rows are written only while it holds the batch's lease. */
  readonly token: string;
  /** How long its jobs wait before they may run (approval or schedule), 0 for none. */
  readonly delayMs: number;
  readonly lane: JobPriority;
}

/**
 * How long a submission holds its batch without renewing (SubmissionLease renews it every
 * third of this from the start). A submission that died mid-way is resumed by the next one
 * after this.
 */
const SUBMIT_LEASE_MS = 30_000;
/** How long a submission waits for another one of the same batch before it gives up (409). */
const SUBMIT_WAIT_MS = 120_000;
/** How often a submission that found another one under way looks again. */
const LEASE_POLL_MS = 50;

type BatchRedis = RedisConnection & {
  moneyqClaimReferences(key: string, batchId: string, ...refs: string[]): Promise<number[]>;
};

/**
 * Bulk batches: every row validated before anything is enqueued, keys derived from account,
 * batch id and reference, duplicates refused (in the file and against earlier batches of
 * the account), a state with counters kept by the results script, a report, and cancel.
 */
export class Batches {
  readonly #redis: BatchRedis;
  readonly #options: BatchesOptions;
  readonly #store: BatchStore;
  readonly #index: BatchIndex;
  readonly #replicas: ReplicaWaits;
  readonly #unsealed: UnsealedBatches;

  constructor(options: BatchesOptions) {
    const redis = options.connection;
    defineScripts(redis, CLAIM_BATCH_REFERENCES);
    this.#redis = redis as BatchRedis;
    this.#options = options;
    this.#store = new BatchStore(redis, options.prefix, options.results);
    this.#index = new BatchIndex(redis, options.prefix);
    this.#replicas = new ReplicaWaits(redis, keyspace(options.prefix, redis.isCluster));
    this.#unsealed = new UnsealedBatches({
      connection: redis,
      store: this.#store,
      producer: options.producer,
      results: options.results,
      leaseMs: this.#leaseMs,
      lines: (account, batchId) => this.#allLines(account, batchId),
    });
  }

  /**
   * Cancels the batches of `accounts` whose submission stopped and was not resumed before
   * their `sealBy`, and gives each row its `cancelled` result (docs/batches.md, "When a
   * submission fails"). Every moneyq process runs it now and then; answers how many it cleared.
   */
  sweepUnsealed(accounts: readonly string[]): Promise<number> {
    return this.#unsealed.sweep(accounts);
  }

  /**
   * Validates every row, then (unless a dry run) enqueues the batch. Throws BatchRefusedError
   * listing every bad row when any row is invalid or a duplicate and `allowPartial` is off.
   */
  async submit(options: SubmitOptions): Promise<SubmitReport> {
    const { account, kind } = options;
    const notBeforeMs = scheduleOf(options.notBefore);
    const { rows, held, issues } = await this.#read(options);
    if (options.priority === "urgent" && rows > MAX_URGENT_BATCH_ROWS)
      throw new BatchOptionError(
        "priority",
        `urgent: at most ${MAX_URGENT_BATCH_ROWS} rows (this batch has ${rows}); a larger batch is bulk`,
      );
    const batchId = options.batchId ?? this.#batchIdOf(account, options.source.digest());
    const sorted = await this.#sortRows({ account, batchId, kind }, held, issues);
    let valid = sorted.valid;
    const { repeats } = sorted;
    const counts = () => {
      const bad = new Set(issues.map((i) => i.row));
      const duplicates = new Set(issues.filter((i) => i.type === "duplicate").map((i) => i.row))
        .size;
      return { rows, accepted: valid.length, invalid: bad.size - duplicates, duplicates };
    };
    if (options.dryRun) {
      const status = undefined;
      const funds =
        kind === "payout.stable"
          ? await checkFunds(
              account,
              stableNeeds(valid.map((i) => held.value(i))),
              this.#options.balances,
            )
          : undefined;
      return { batchId, dryRun: true, created: false, ...counts(), issues, repeats, funds, status };
    }
    const keys = this.#store.keys(account, batchId);
    if ((issues.length > 0 && !options.allowPartial) || valid.length === 0) {
      // A submission that stopped while sending may have enqueued rows already: it is finished,
      // its rows whose key another request took since then reported, never left half-sent.
      const interrupted =
        valid.length > 0 &&
        issues.every((i) => i.rule.startsWith(KEY_REUSED)) &&
        (await this.#redis.hget(keys.meta, "state")) === "validating";
      if (!interrupted) throw new BatchRefusedError(rows, issues);
    }

    const token = randomUUID();
    const digest = options.source.digest();
    const totals = requestedTotalFields(moneyOf(held, valid).values());
    const policy = this.#options.approvals?.get(account);
    const approval =
      approvalNeeded(policy, totalsOf(totals)) ??
      (repeats.policy === "hold" && repeats.count > 0
        ? { expiresAfterMs: policy?.expiresAfterMs }
        : undefined);
    const now = Date.now();
    const meta = {
      ...{ id: batchId, account, kind, state: "validating", rows, digest },
      ...{ createdAt: new Date(now).toISOString(), done: 0, ...countFields(counts()), ...totals },
      ...holdFields(options.submittedBy, notBeforeMs, approval?.expiresAfterMs, approval, now),
      ...Object.fromEntries(RESULT_KINDS.map((k) => [`n:${k}`, 0])),
      ...repeatMetaFields(repeats),
    };
    // Held jobs wait in BullMQ's delayed set; the gate holds any that comes up early.
    const delayMs = approval
      ? (approval.expiresAfterMs ?? APPROVAL_HOLD_MS)
      : Math.max(0, (notBeforeMs ?? 0) - now);
    const begun = await this.#begin(account, batchId, token, digest, meta, options.signal);
    if (begun === "submitted") {
      const status = await this.status(account, batchId);
      return { batchId, dryRun: false, created: false, ...counts(), issues, repeats, status };
    }
    const lease = new SubmissionLease(this.#redis, leaseKeys(keys), token, this.#leaseMs);
    try {
      if (begun === "resumed") await this.#redis.hset(keys.meta, countFields(counts()));
      const raced = await this.#claim(account, batchId, held, valid);
      if (raced.size > 0) {
        for (const i of valid)
          if (raced.has(i)) issues.push(duplicateIssue(held, i, "another batch"));
        valid = valid.filter((i) => !raced.has(i));
        issues.sort((a, b) => a.row - b.row);
        if (!options.allowPartial || valid.length === 0) {
          await this.#releaseReferences(account, held, valid);
          if (begun === "created") await this.#redis.del(keys.meta, keys.rows);
          throw new BatchRefusedError(rows, issues);
        }
        await this.#redis.hset(keys.meta, countFields(counts()));
        if (begun === "created")
          await this.#subtractTotals(keys.meta, moneyOf(held, [...raced]).values());
      }
      await this.#writeIssueLines(keys.rows, issues);
      const target = { kind, account, batchId, token, delayMs, lane: options.priority ?? "bulk" };
      // A key taken by another request since the check: that row is an issue, the others go on.
      const refused = await this.#sendAll(target, held, valid, lease);
      if (refused.length > 0) {
        issues.push(...refused);
        const rowsRefused = new Set(refused.map((i) => i.row));
        valid = valid.filter((i) => !rowsRefused.has(held.row(i)));
        issues.sort((a, b) => a.row - b.row);
      }
      await this.#seal(account, batchId, token);
    } finally {
      await lease.release();
    }
    const status = await this.status(account, batchId);
    return { batchId, dryRun: false, created: true, ...counts(), issues, repeats, status };
  }

  /**
   * Sorts the held rows: those whose reference an earlier batch holds, or whose key holds
   * another request, become issues; those that repeat a payment are reported, and become
   * issues under a `refuse` policy (docs/safety.md); the others are valid (held indices).
   */
  async #sortRows(
    batch: { readonly account: string; readonly batchId: string; readonly kind: BatchKind },
    held: Held,
    issues: RowIssue[],
  ): Promise<{ valid: number[]; repeats: RepeatReport }> {
    const { account, batchId } = batch;
    const earlier = await this.#heldElsewhere(account, batchId, held);
    // Any row's key may be held already: by this batch id sent before, or by a job enqueued alone.
    const reused = await keyReuseIssues(this.#options.producer, batch, held);
    let valid: number[] = [];
    for (let i = 0; i < held.length; i += 1) {
      const owner = earlier.get(i);
      const reuse = reused.get(i);
      if (owner !== undefined) issues.push(duplicateIssue(held, i, owner));
      else if (reuse !== undefined) issues.push(reuse);
      else valid.push(i);
    }
    const store = this.#options.producer.repeats;
    const policy = store.policyOf(account);
    const found = await batchRepeats(store, batch, held, valid);
    if (policy.policy === "refuse") {
      for (const [i, matches] of found)
        issues.push(repeatIssue(held, i, matches, store.windowText(account)));
      valid = valid.filter((i) => !found.has(i));
    }
    issues.sort((a, b) => a.row - b.row);
    return { valid, repeats: repeatReport(policy, held, found) };
  }

  /**
   * Ends validation (BatchStore.queued), sealing the batch, and releases the jobs the gate held
   * meanwhile; answers once a failover would keep the batch (claims, rows, jobs, state).
   */
  async #seal(account: string, batchId: string, token: string): Promise<void> {
    const queued = await this.#store.queued(account, batchId, token);
    if (queued === "lost") throw new BatchSubmissionBusyError(batchId, "taken_over");
    await this.#unsealed.releaseHeld(account, batchId, queued);
    await this.#replicas.ensure(account);
  }

  get #leaseMs(): number {
    return this.#options.submitLeaseMs ?? SUBMIT_LEASE_MS;
  }

  /**
   * Begins a submission (BatchStore.begin). While another submission of the batch holds it,
   * waits, at most `submitWaitMs` and only while `signal` is not aborted: that one's outcome
   * (enqueued, refused, or died and left to resume) decides this one's.
   */
  async #begin(
    account: string,
    batchId: string,
    token: string,
    digest: string,
    meta: Record<string, string | number>,
    signal: AbortSignal | undefined,
  ): Promise<"submitted" | "created" | "resumed"> {
    const deadline = Date.now() + (this.#options.submitWaitMs ?? SUBMIT_WAIT_MS);
    const lease = { token, ms: this.#leaseMs };
    for (;;) {
      const begun = await this.#store.begin(account, batchId, lease, digest, meta);
      if (begun === "reused") throw new BatchIdReusedError(String(meta.id));
      if (begun !== "busy") return begun;
      if (Date.now() >= deadline || signal?.aborted)
        throw new BatchSubmissionBusyError(String(meta.id), "waited");
      await new Promise((resolve) => setTimeout(resolve, LEASE_POLL_MS));
    }
  }

  /**
   * Enqueues the accepted rows, a few chunks in flight; answers the rows refused because their
   * key holds another request. Stops, throwing BatchSubmissionBusyError, once the lease is lost:
   * another submission took the batch over.
   */
  async #sendAll(
    batch: BatchTarget,
    held: Held,
    valid: readonly number[],
    lease: SubmissionLease,
  ): Promise<RowIssue[]> {
    const refused: RowIssue[] = [];
    // A few chunks in flight at once: this process serialises the next chunk while Redis runs
    // the scripts of the last.
    const inFlight = new Set<Promise<unknown>>();
    let stopped: { error: unknown } | undefined;
    try {
      for (let i = 0; i < valid.length; i += SEND_CHUNK) {
        if (inFlight.size >= SEND_CHUNKS_IN_FLIGHT) await Promise.race(inFlight);
        if (lease.lost) throw new BatchSubmissionBusyError(batch.batchId, "taken_over");
        const chunk = valid.slice(i, i + SEND_CHUNK);
        const sent: Promise<unknown> = this.#sendChunk(batch, held, chunk)
          .then((issues) => refused.push(...issues))
          .finally(() => inFlight.delete(sent));
        inFlight.add(sent);
      }
    } catch (error) {
      stopped = { error };
    }
    // Every chunk under way settles before the submission answers (or releases its lease).
    const settled = await Promise.allSettled(inFlight);
    if (stopped) throw stopped.error;
    const failed = settled.find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
    return refused;
  }

  /** Reads and validates every row; the accepted ones are held, keyed later by batch id. */
  async #read(options: SubmitOptions): Promise<{ rows: number; held: Held; issues: RowIssue[] }> {
    const { account, kind } = options;
    const issues: RowIssue[] = [];
    const held: Held = new HeldRows();
    const firstRowOf = new Map<string, number>();
    const pending = {
      account,
      batchId: options.batchId ?? PENDING_BATCH_ID,
      idempotencyKey: PENDING_KEY,
    };
    let rows = 0;
    for await (const raw of options.source.rows) {
      rows = raw.row;
      const converted = rowInput(kind, raw, pending);
      if (!converted.ok) {
        issues.push(...converted.issues);
        continue;
      }
      let envelope: JobEnvelope;
      try {
        envelope = this.#options.producer.envelopeOf(converted.input);
      } catch (error) {
        if (!(error instanceof EnqueueValidationError)) throw error;
        for (const i of error.issues)
          issues.push({
            type: "invalid",
            row: raw.row,
            reference: converted.reference,
            column: columnOf(i),
            rule: i.rule,
          });
        continue;
      }
      const first = firstRowOf.get(converted.reference);
      if (first !== undefined) {
        issues.push({
          type: "duplicate",
          row: raw.row,
          reference: converted.reference,
          column: "reference",
          rule: `the same reference as row ${first}`,
        });
        continue;
      }
      firstRowOf.set(converted.reference, raw.row);
      held.add(raw.row, converted.reference, envelope.request);
    }
    return { rows, held, issues };
  }

  /**
   * Keys a chunk of held rows, records their report lines and enqueues them. A row whose key
   * holds another request by now is not enqueued: its line and the counters say invalid, and
   * its issue is answered.
   */
  async #sendChunk(batch: BatchTarget, held: Held, chunk: readonly number[]): Promise<RowIssue[]> {
    const { account, batchId } = batch;
    const kind = BATCH_KINDS[batch.kind].jobKind;
    const envelopes: JobEnvelope[] = [];
    const lines: string[] = [];
    for (const i of chunk) {
      const row = held.row(i);
      const reference = held.reference(i);
      const idempotencyKey = deriveIdempotencyKey(account, batchId, reference);
      // The envelope as validated: a batch row has no metadata, and kind and account are the batch's.
      envelopes.push({
        kind,
        account,
        idempotencyKey,
        batchId,
        row,
        reference,
        request: held.value(i),
      } as JobEnvelope);
      lines.push(
        String(row),
        JSON.stringify({
          row,
          reference,
          idempotencyKey,
          result: "queued",
          ...rowMoney(held.value(i)),
        } satisfies ReportLine),
      );
    }
    if (!(await this.#store.setRows(account, batchId, batch.token, lines)))
      throw new BatchSubmissionBusyError(batchId, "taken_over");
    const { reused } = await this.#options.producer.enqueueUnlessReused(
      envelopes,
      batch.lane,
      batch.delayMs,
    );
    const issues = reused.map((j) => keyReuseIssue(envelopes[j] as JobEnvelope));
    if (issues.length > 0) {
      const keys = this.#store.keys(account, batchId);
      const n = issues.length;
      await this.#writeIssueLines(keys.rows, issues);
      await this.#redis
        .multi()
        .hincrby(keys.meta, "accepted", -n)
        .hincrby(keys.meta, "invalid", n)
        .hincrby(keys.meta, "skipped", n)
        .exec();
      const money = reused.flatMap((j) => {
        const m = rowMoney((envelopes[j] as JobEnvelope).request);
        return m ? [m] : [];
      });
      await this.#subtractTotals(keys.meta, money);
    }
    return issues;
  }

  /** The state and counters of the account's batch; BatchNotFoundError if it has none. */
  async status(account: string, batchId: string): Promise<BatchStatus> {
    const meta = await this.#store.meta(account, batchId);
    if (meta.id === undefined) throw new BatchNotFoundError(batchId);
    const n = (field: string) => Number(meta[field] ?? 0);
    let state = meta.state as BatchState;
    let accepted = n("accepted");
    // Validating with no submission holding it: the submission stopped (failed, or its
    // process died). Its rows enqueued so far are those whose job exists.
    if (state === "validating" && !(await this.#store.leaseHeld(account, batchId))) {
      state = "submission_failed";
      accepted = (await this.#unsealed.enqueuedRows(account, batchId)).enqueued.length;
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
    const page = await this.#index.list(accounts, stored, limit);
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
      accounts.map((account) => this.#redis.exists(this.#store.keys(account, batchId).meta)),
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
  async *#allLines(account: string, batchId: string): AsyncGenerator<ReportLine> {
    const rows = Number(await this.#redis.hget(this.#store.keys(account, batchId).meta, "rows"));
    yield* this.#reportLines(account, batchId, rows || 0);
  }

  async *#reportLines(account: string, batchId: string, rows: number): AsyncGenerator<ReportLine> {
    const key = this.#store.keys(account, batchId).rows;
    for (let start = 1; start <= rows; start += CHUNK) {
      const fields = Array.from({ length: Math.min(CHUNK, rows - start + 1) }, (_, i) =>
        String(start + i),
      );
      for (const line of await this.#redis.hmget(key, ...fields))
        if (line !== null) yield JSON.parse(line) as ReportLine;
    }
  }

  /**
   * Cancels a batch: marks it cancelled (a job not yet sent then never is), removes its
   * waiting and delayed jobs, and records `cancelled` as their result.
   */
  async cancel(account: string, batchId: string): Promise<CancelReport> {
    const before = await this.#store.cancel(account, batchId);
    const unsealed =
      before === "validating" && (await this.#store.meta(account, batchId)).sealBy !== undefined;
    const report = unsealed
      ? await this.#cancelUnsealed(account, batchId)
      : await this.#cancelJobs(account, batchId, CANCELLED_BY.batch.cancelled);
    // Reported cancelled only once a failover would keep it so: a lost cancel would pay.
    await this.#replicas.ensure(account);
    return report;
  }

  /**
   * A batch cancelled before its submission sealed it: cleared as an abandoned one is, none of
   * its jobs having been sent. While a submission still holds it, its rows end as their jobs
   * come up (or the sweep clears it).
   */
  async #cancelUnsealed(account: string, batchId: string): Promise<CancelReport> {
    const cleared: Cleared | undefined = await this.#unsealed.clear(account, batchId);
    const status = await this.status(account, batchId);
    return {
      batchId,
      cancelled: cleared?.cancelled ?? 0,
      inFlight: cleared?.inFlight ?? status.accepted - status.finished,
      finished: 0,
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
      await this.#store.decide(account, batchId, "approve", approver);
    } catch (error) {
      const release = await this.#releaseState(account, batchId);
      if (!(error instanceof BatchDecisionError && release !== "none")) throw error;
      // Approved and released already: nothing to do. A second release would pull forward the
      // jobs waiting in the delayed set for other reasons (a confirmation lookup, a retry).
      if (release === "done")
        return { batchId, jobs: 0, status: await this.status(account, batchId) };
      again = true;
    }
    const released = await this.#release(account, batchId, again);
    await this.#store.markReleased(account, batchId);
    return { batchId, jobs: released, status: await this.status(account, batchId) };
  }

  /**
   * Releases the approved batch's queued jobs: at once, or at its `notBefore`. `again` (the
   * release of an earlier approval stopped half-way, a crash): only the jobs that never ran a
   * request, the ones it did not get to; one that ran since waits where it is.
   */
  async #release(account: string, batchId: string, again: boolean): Promise<number> {
    const status = await this.status(account, batchId);
    const delayMs = Math.max(0, Date.parse(status.notBefore ?? "") - Date.now() || 0);
    let released = 0;
    const pending: ReportLine[] = [];
    const releaseAll = async () => {
      const moved = await Promise.all(
        pending.map((line) =>
          this.#options.producer.release(
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
    for await (const line of this.report(account, batchId)) {
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
    await this.#store.decide(account, batchId, "reject", approver);
    const report = await this.#cancelJobs(account, batchId, CANCELLED_BY.batch.rejected);
    return { batchId, jobs: report.cancelled, status: report.status };
  }

  /**
   * Where the release of an approved batch stands: `none` (not approved, or finished: nothing
   * to release), `done` (every job was released), `cut_short` (approved, but the release did
   * not finish: a crash, or an approval recorded by an earlier release, which kept no mark).
   */
  async #releaseState(account: string, batchId: string): Promise<"none" | "done" | "cut_short"> {
    const status = await this.status(account, batchId);
    // Approved, it is past validation and approval: cancellable means not finished yet.
    if (status.approval?.state !== "approved" || !isCancellable(status.state)) return "none";
    return (await this.#store.released(account, batchId)) ? "done" : "cut_short";
  }

  /** Removes the batch's jobs that no worker holds, recording `ending` as their result. */
  async #cancelJobs(
    account: string,
    batchId: string,
    ending: { readonly code: ResultCode; readonly message: string },
  ): Promise<CancelReport> {
    const status = await this.status(account, batchId);
    let cancelled = 0;
    let inFlight = 0;
    let finished = 0;
    for await (const line of this.report(account, batchId)) {
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
      const withdrawal = await this.#options.producer.withdraw(status.account, jobId);
      if (withdrawal === "removed" || withdrawal === "removed_maybe_sent") {
        await this.#options.results.emit(
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
      status: await this.status(account, batchId),
    };
  }

  async #subtractTotals(meta: string, money: Iterable<RowMoney>): Promise<void> {
    const stored = await this.#redis.hgetall(meta);
    const increments = refusedTotalIncrements(stored, money);
    if (increments.length === 0) return;
    const multi = this.#redis.multi();
    for (const [field, by] of increments) multi.hincrby(meta, field, by);
    await multi.exec();
  }

  #batchIdOf(account: string, digest: string): string {
    return `b_${createHash("sha256").update(`${account}\u0000${digest}`).digest("hex").slice(0, 32)}`;
  }

  #refsKey(account: string): string {
    return batchReferencesKey(this.#store.keyspace, account);
  }

  /** Held rows (by index) whose reference an earlier batch of the account holds, with its id. */
  async #heldElsewhere(account: string, batchId: string, held: Held): Promise<Map<number, string>> {
    const owners = new Map<number, string>();
    for (let start = 0; start < held.length; start += CHUNK) {
      const end = Math.min(start + CHUNK, held.length);
      const references: string[] = [];
      for (let i = start; i < end; i += 1) references.push(held.reference(i));
      const found = await this.#redis.hmget(this.#refsKey(account), ...references);
      found.forEach((owner, j) => {
        if (owner !== null && owner !== batchId) owners.set(start + j, owner);
      });
    }
    return owners;
  }

  /** Claims the references of `indices`; returns the indices another batch claimed first. */
  async #claim(
    account: string,
    batchId: string,
    held: Held,
    indices: readonly number[],
  ): Promise<Set<number>> {
    const raced = new Set<number>();
    for (let i = 0; i < indices.length; i += CHUNK) {
      const chunk = indices.slice(i, i + CHUNK);
      const taken = await this.#redis.moneyqClaimReferences(
        this.#refsKey(account),
        batchId,
        ...chunk.map((index) => held.reference(index)),
      );
      for (const position of taken) raced.add(chunk[position - 1] as number);
    }
    return raced;
  }

  async #releaseReferences(account: string, held: Held, indices: readonly number[]): Promise<void> {
    for (let i = 0; i < indices.length; i += CHUNK)
      await this.#redis.hdel(
        this.#refsKey(account),
        ...indices.slice(i, i + CHUNK).map((index) => held.reference(index)),
      );
  }

  async #writeIssueLines(key: string, issues: readonly RowIssue[]): Promise<void> {
    const byRow = new Map<number, RowIssue[]>();
    for (const i of issues) byRow.set(i.row, [...(byRow.get(i.row) ?? []), i]);
    const entries = [...byRow.entries()];
    for (let i = 0; i < entries.length; i += CHUNK) {
      const args = entries.slice(i, i + CHUNK).flatMap(([row, list]) => [
        String(row),
        JSON.stringify({
          row,
          reference: list[0]?.reference,
          idempotencyKey: undefined,
          result: list.some((x) => x.type === "duplicate") ? "duplicate" : "invalid",
          error: list.map((x) => (x.column ? `${x.column}: ${x.rule}` : x.rule)).join("; "),
        } satisfies ReportLine),
      ]);
      if (args.length > 0) await this.#redis.hset(key, ...args);
    }
  }
}

/** The money of the held rows `indices`, by index (rows without a currency are left out). */
function moneyOf(held: Held, indices: Iterable<number>): Map<number, RowMoney> {
  const out = new Map<number, RowMoney>();
  for (const i of indices) {
    const money = rowMoney(held.value(i));
    if (money) out.set(i, money);
  }
  return out;
}

/** A batch's `notBefore` in ms, checked: BatchOptionError if it is too far ahead. */
function scheduleOf(notBefore: Date | undefined): number | undefined {
  if (notBefore === undefined) return undefined;
  const ms = notBefore.getTime();
  if (!Number.isFinite(ms)) throw new BatchOptionError("notBefore", "must be a valid instant");
  if (ms - Date.now() > MAX_SCHEDULE_AHEAD_MS)
    throw new BatchOptionError("notBefore", "at most 366 days ahead");
  return ms;
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

/** The keys of a batch's submission lease: its own, and the meta its renewal moves `sealBy` in. */
function leaseKeys(keys: { readonly submitting: string; readonly meta: string }) {
  return { lease: keys.submitting, meta: keys.meta };
}

/** The meta fields of who submitted a batch and what holds it: its `notBefore`, its approval. */
function holdFields(
  submittedBy: string | undefined,
  notBeforeMs: number | undefined,
  expiresAfterMs: number | undefined,
  approval: object | undefined,
  now: number,
): Record<string, string | number> {
  return {
    ...(submittedBy !== undefined && { submittedBy }),
    ...(notBeforeMs !== undefined && {
      notBefore: new Date(notBeforeMs).toISOString(),
      notBeforeMs,
    }),
    ...(approval && { approval: "pending" }),
    ...(expiresAfterMs !== undefined && {
      approvalExpiresMs: now + expiresAfterMs,
      approvalExpiresAt: new Date(now + expiresAfterMs).toISOString(),
    }),
  };
}

/** The meta's counters of a submission's counts. */
function countFields(c: { accepted: number; invalid: number; duplicates: number }) {
  return {
    accepted: c.accepted,
    invalid: c.invalid,
    duplicates: c.duplicates,
    skipped: c.invalid + c.duplicates,
  };
}

function duplicateIssue(held: Held, index: number, holder: string): RowIssue {
  return {
    type: "duplicate",
    row: held.row(index),
    reference: held.reference(index),
    column: "reference",
    rule: `reference already used by batch ${holder}`,
  };
}
