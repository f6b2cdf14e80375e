import { createHash, randomUUID } from "node:crypto";
import { deriveIdempotencyKey } from "../queues/idempotency-key.js";
import type { JobEnvelope } from "../queues/job-envelope.js";
import { APPROVAL_HOLD_MS, MAX_SCHEDULE_AHEAD_MS } from "../queues/job-holds.js";
import { type RowMoney, rowMoney } from "../queues/job-money.js";
import type { JobPriority } from "../queues/lanes.js";
import type { PaymentMatch } from "../queues/payment-repeats.js";
import { batchReferencesKey } from "../redis/keys.js";
import { RESULT_KINDS } from "../results/job-result.js";
import type { ReportLine } from "../results/report-line.js";
import { approvalNeeded } from "./approval-policy.js";
import {
  BatchIdReusedError,
  BatchOptionError,
  BatchRefusedError,
  BatchSubmissionBusyError,
  type RowIssue,
} from "./batch-errors.js";
import { BATCH_KINDS, type BatchKind } from "./batch-kinds.js";
import {
  BatchPart,
  type BatchParts,
  CHUNK,
  type Held,
  SEND_CHUNK,
  SEND_CHUNKS_IN_FLIGHT,
} from "./batch-parts.js";
import type { BatchQueries } from "./batch-queries.js";
import {
  batchRepeats,
  type RepeatReport,
  repeatIssue,
  repeatMetaFields,
  repeatReport,
} from "./batch-repeats.js";
import type { BatchesOptions, SubmitOptions, SubmitReport } from "./batch-reports.js";
import { refusedTotalIncrements, requestedTotalFields, totalsOf } from "./batch-totals.js";
import { checkFunds, stableNeeds } from "./funds-check.js";
import { KEY_REUSED, keyReuseIssue, keyReuseIssues } from "./key-reuse.js";
import { type HeldCheck, type Read, readRows, runHeldChecks } from "./row-checks.js";
import { SubmissionLease } from "./submission-lease.js";

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

/** Where the rows stand after a step: the valid ones (held indices), every issue, the repeats. */
interface Checked {
  readonly valid: readonly number[];
  readonly issues: readonly RowIssue[];
  readonly repeats: RepeatReport;
}

/** What a submission writes before it sends: its lease token, the meta, its jobs' wait. */
interface Plan {
  readonly token: string;
  readonly digest: string;
  readonly meta: Record<string, string | number>;
  readonly delayMs: number;
}

/** The counts of a submission, from the rows read and where they stand. */
function countsOf(read: Read, { valid, issues }: Checked) {
  const bad = new Set(issues.map((i) => i.row));
  const duplicates = new Set(issues.filter((i) => i.type === "duplicate").map((i) => i.row)).size;
  return { rows: read.rows, accepted: valid.length, invalid: bad.size - duplicates, duplicates };
}

/** How long a submission holds its batch without renewing. */
export function leaseMsOf(options: Pick<BatchesOptions, "submitLeaseMs">): number {
  return options.submitLeaseMs ?? SUBMIT_LEASE_MS;
}

/** A batch's submission: read, check, begin the lease, claim, send, seal. */
export class BatchSubmission extends BatchPart {
  readonly #queries: BatchQueries;

  constructor(parts: BatchParts, queries: BatchQueries) {
    super(parts);
    this.#queries = queries;
  }

  /**
   * Validates every row, then (unless a dry run) enqueues the batch. Throws BatchRefusedError
   * listing every bad row when any row is invalid or a duplicate and `allowPartial` is off.
   * The steps: read, check, (a dry run answers here) refuse, plan, begin the lease, claim,
   * send, seal; each answers what the next one takes.
   */
  async submit(options: SubmitOptions): Promise<SubmitReport> {
    const notBeforeMs = scheduleOf(options.notBefore);
    const read = await readRows(options.source, options, this.options.producer);
    const batchId = this.#batchIdFor(options, read);
    const checked = await this.#check(options, batchId, read);
    if (options.dryRun) return this.#dryRun(options, batchId, read, checked);
    await this.#refuseUnlessInterrupted(options, batchId, read, checked);
    const plan = this.#plan(options, notBeforeMs, batchId, read, checked);
    const begun = await this.#begin(options.account, batchId, plan, options.signal);
    if (begun === "submitted") return this.#answer(options, batchId, read, checked, false);
    const keys = this.store.keys(options.account, batchId);
    const lease = new SubmissionLease(this.redis, leaseKeys(keys), plan.token, this.#leaseMs);
    let sent: Checked;
    try {
      if (begun === "resumed")
        await this.redis.hset(keys.meta, countFields(countsOf(read, checked)));
      const claimed = await this.#claimRows(options, batchId, read, checked, begun);
      await this.#writeIssueLines(keys.rows, claimed.issues);
      sent = await this.#send(options, batchId, plan, read.held, claimed, lease);
      await this.#seal(options.account, batchId, plan.token);
    } finally {
      await lease.release();
    }
    return this.#answer(options, batchId, read, sent, true);
  }

  /** The batch's id: the one given, or one derived from account and content; checks urgency. */
  #batchIdFor(options: SubmitOptions, read: Read): string {
    if (options.priority === "urgent" && read.rows > MAX_URGENT_BATCH_ROWS)
      throw new BatchOptionError(
        "priority",
        `urgent: at most ${MAX_URGENT_BATCH_ROWS} rows (this batch has ${read.rows}); a larger batch is bulk`,
      );
    return options.batchId ?? this.#batchIdOf(options.account, options.source.digest());
  }

  /**
   * The rows read, through checks 4 to 6 of row-checks.ts in their order: a reference an
   * earlier batch holds, a key that holds another request, a repeated payment. Repeats are
   * reported, and refused under a `refuse` policy (docs/safety.md).
   */
  async #check(options: SubmitOptions, batchId: string, read: Read): Promise<Checked> {
    const { account, kind } = options;
    const batch = { account, batchId, kind };
    const { held } = read;
    const producer = this.options.producer;
    const store = producer.repeats;
    const policy = store.policyOf(account);
    let found = new Map<number, PaymentMatch[]>();
    const checks: HeldCheck[] = [
      {
        name: "in an earlier batch",
        run: (candidates) => this.#heldElsewhere(account, batchId, held, candidates),
      },
      {
        // Any row's key may be held already: by this batch id sent before, or by a job enqueued alone.
        name: "key reuse",
        run: (candidates) => keyReuseIssues(producer, batch, held, candidates),
      },
      {
        name: "repeat",
        run: async (candidates) => {
          found = await batchRepeats(store, batch, held, candidates);
          if (policy.policy !== "refuse") return new Map();
          const window = store.windowText(account);
          return new Map(
            [...found].map(([i, matches]) => [i, repeatIssue(held, i, matches, window)]),
          );
        },
      },
    ];
    const { valid, issues } = await runHeldChecks(checks, held, read.issues);
    return { valid, issues, repeats: repeatReport(policy, held, found) };
  }

  /** A dry run's answer: the counts and issues, and the funds a stable payout batch needs. */
  async #dryRun(
    options: SubmitOptions,
    batchId: string,
    read: Read,
    checked: Checked,
  ): Promise<SubmitReport> {
    const { account, kind } = options;
    const funds =
      kind === "payout.stable"
        ? await checkFunds(
            account,
            stableNeeds(checked.valid.map((i) => read.held.value(i))),
            this.options.balances,
          )
        : undefined;
    const { issues, repeats } = checked;
    const counts = countsOf(read, checked);
    return {
      batchId,
      dryRun: true,
      created: false,
      ...counts,
      issues,
      repeats,
      funds,
      status: undefined,
    };
  }

  /**
   * Refuses a batch with issues (unless partial) or with no valid row. A submission that
   * stopped while sending may have enqueued rows already: it is finished, its rows whose key
   * another request took since then reported, never left half-sent.
   */
  async #refuseUnlessInterrupted(
    options: SubmitOptions,
    batchId: string,
    read: Read,
    { valid, issues }: Checked,
  ): Promise<void> {
    if ((issues.length === 0 || options.allowPartial) && valid.length > 0) return;
    const interrupted =
      valid.length > 0 &&
      issues.every((i) => i.rule.startsWith(KEY_REUSED)) &&
      (await this.redis.hget(this.store.keys(options.account, batchId).meta, "state")) ===
        "validating";
    if (!interrupted) throw new BatchRefusedError(read.rows, issues);
  }

  /** What the submission writes: its token, the batch's meta, and how long its jobs wait. */
  #plan(
    options: SubmitOptions,
    notBeforeMs: number | undefined,
    batchId: string,
    read: Read,
    checked: Checked,
  ): Plan {
    const { account, kind } = options;
    const { rows, held } = read;
    const digest = options.source.digest();
    const totals = requestedTotalFields(moneyOf(held, checked.valid).values());
    const policy = this.options.approvals?.get(account);
    const approval =
      approvalNeeded(policy, totalsOf(totals)) ??
      (checked.repeats.policy === "hold" && checked.repeats.count > 0
        ? { expiresAfterMs: policy?.expiresAfterMs }
        : undefined);
    const now = Date.now();
    const meta = {
      ...{ id: batchId, account, kind, state: "validating", rows, digest },
      ...{ createdAt: new Date(now).toISOString(), done: 0 },
      ...countFields(countsOf(read, checked)),
      ...totals,
      ...holdFields(options.submittedBy, notBeforeMs, approval?.expiresAfterMs, approval, now),
      ...Object.fromEntries(RESULT_KINDS.map((k) => [`n:${k}`, 0])),
      ...repeatMetaFields(checked.repeats),
    };
    // Held jobs wait in BullMQ's delayed set; the gate holds any that comes up early.
    const delayMs = approval
      ? (approval.expiresAfterMs ?? APPROVAL_HOLD_MS)
      : Math.max(0, (notBeforeMs ?? 0) - now);
    return { token: randomUUID(), digest, meta, delayMs };
  }

  /**
   * Claims the valid rows' references. Rows another batch claimed first become duplicates:
   * refused whole (their claims given back, a batch this submission created deleted) unless
   * partial, else left out of the counts and totals.
   */
  async #claimRows(
    options: SubmitOptions,
    batchId: string,
    read: Read,
    checked: Checked,
    begun: "created" | "resumed",
  ): Promise<Checked> {
    const { account } = options;
    const { held } = read;
    const raced = await this.#claim(account, batchId, held, checked.valid);
    if (raced.size === 0) return checked;
    const keys = this.store.keys(account, batchId);
    const issues = [
      ...checked.issues,
      ...checked.valid
        .filter((i) => raced.has(i))
        .map((i) => duplicateIssue(held, i, "another batch")),
    ].sort((a, b) => a.row - b.row);
    const claimed = { ...checked, valid: checked.valid.filter((i) => !raced.has(i)), issues };
    if (!options.allowPartial || claimed.valid.length === 0) {
      await this.#releaseReferences(account, held, claimed.valid);
      if (begun === "created") await this.redis.del(keys.meta, keys.rows);
      throw new BatchRefusedError(read.rows, issues);
    }
    await this.redis.hset(keys.meta, countFields(countsOf(read, claimed)));
    if (begun === "created")
      await this.#subtractTotals(keys.meta, moneyOf(held, [...raced]).values());
    return claimed;
  }

  /** Enqueues the claimed rows; a row whose key another request took since the check is an issue. */
  async #send(
    options: SubmitOptions,
    batchId: string,
    plan: Plan,
    held: Held,
    claimed: Checked,
    lease: SubmissionLease,
  ): Promise<Checked> {
    const { kind, account } = options;
    const { token, delayMs } = plan;
    const target = { kind, account, batchId, token, delayMs, lane: options.priority ?? "bulk" };
    const refused = await this.#sendAll(target, held, claimed.valid, lease);
    if (refused.length === 0) return claimed;
    const rowsRefused = new Set(refused.map((i) => i.row));
    return {
      ...claimed,
      valid: claimed.valid.filter((i) => !rowsRefused.has(held.row(i))),
      issues: [...claimed.issues, ...refused].sort((a, b) => a.row - b.row),
    };
  }

  /** The submission's answer, with the batch's status as it stands. */
  async #answer(
    options: SubmitOptions,
    batchId: string,
    read: Read,
    checked: Checked,
    created: boolean,
  ): Promise<SubmitReport> {
    const status = await this.#queries.status(options.account, batchId);
    const { issues, repeats } = checked;
    return { batchId, dryRun: false, created, ...countsOf(read, checked), issues, repeats, status };
  }

  /**
   * Ends validation (BatchStore.queued), sealing the batch, and releases the jobs the gate held
   * meanwhile; answers once a failover would keep the batch (claims, rows, jobs, state).
   */
  async #seal(account: string, batchId: string, token: string): Promise<void> {
    const queued = await this.store.queued(account, batchId, token);
    if (queued === "lost") throw new BatchSubmissionBusyError(batchId, "taken_over");
    await this.unsealed.releaseHeld(account, batchId, queued);
    await this.replicas.ensure(account);
  }

  get #leaseMs(): number {
    return leaseMsOf(this.options);
  }

  /**
   * Begins a submission (BatchStore.begin). While another submission of the batch holds it,
   * waits, at most `submitWaitMs` and only while `signal` is not aborted: that one's outcome
   * (enqueued, refused, or died and left to resume) decides this one's.
   */
  async #begin(
    account: string,
    batchId: string,
    { token, digest, meta }: Plan,
    signal: AbortSignal | undefined,
  ): Promise<"submitted" | "created" | "resumed"> {
    const deadline = Date.now() + (this.options.submitWaitMs ?? SUBMIT_WAIT_MS);
    const lease = { token, ms: this.#leaseMs };
    for (;;) {
      const begun = await this.store.begin(account, batchId, lease, digest, meta);
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
    if (!(await this.store.setRows(account, batchId, batch.token, lines)))
      throw new BatchSubmissionBusyError(batchId, "taken_over");
    const { reused } = await this.options.producer.enqueueUnlessReused(
      envelopes,
      batch.lane,
      batch.delayMs,
    );
    const issues = reused.map((j) => keyReuseIssue(envelopes[j] as JobEnvelope));
    if (issues.length > 0) {
      const keys = this.store.keys(account, batchId);
      const n = issues.length;
      await this.#writeIssueLines(keys.rows, issues);
      await this.redis
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

  async #subtractTotals(meta: string, money: Iterable<RowMoney>): Promise<void> {
    const stored = await this.redis.hgetall(meta);
    const increments = refusedTotalIncrements(stored, money);
    if (increments.length === 0) return;
    const multi = this.redis.multi();
    for (const [field, by] of increments) multi.hincrby(meta, field, by);
    await multi.exec();
  }

  #batchIdOf(account: string, digest: string): string {
    return `b_${createHash("sha256").update(`${account}\u0000${digest}`).digest("hex").slice(0, 32)}`;
  }

  #refsKey(account: string): string {
    return batchReferencesKey(this.store.keyspace, account);
  }

  /** Check 4: the rows among `indices` whose reference an earlier batch of the account holds. */
  async #heldElsewhere(
    account: string,
    batchId: string,
    held: Held,
    indices: readonly number[],
  ): Promise<Map<number, RowIssue>> {
    const issues = new Map<number, RowIssue>();
    for (let start = 0; start < indices.length; start += CHUNK) {
      const chunk = indices.slice(start, start + CHUNK);
      const references = chunk.map((i) => held.reference(i));
      const found = await this.redis.hmget(this.#refsKey(account), ...references);
      found.forEach((owner, j) => {
        const i = chunk[j] as number;
        if (owner !== null && owner !== batchId) issues.set(i, duplicateIssue(held, i, owner));
      });
    }
    return issues;
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
      const taken = await this.redis.moneyqClaimReferences(
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
      await this.redis.hdel(
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
      if (args.length > 0) await this.redis.hset(key, ...args);
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
