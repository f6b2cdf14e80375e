import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import { EnqueueValidationError } from "../queues/enqueue-error.js";
import { deriveIdempotencyKey, jobIdFor } from "../queues/idempotency-key.js";
import type { JobEnvelope } from "../queues/job-envelope.js";
import type { Producer } from "../queues/producer.js";
import { RESULT_KINDS, type ResultKind } from "../results/job-result.js";
import { batchKeys, type ReportLine, type ResultsStore } from "../results/results-store.js";
import {
  BatchNotCancellableError,
  BatchNotFoundError,
  BatchRefusedError,
  type RowIssue,
} from "./batch-errors.js";
import { BATCH_KINDS, type BatchKind } from "./batch-kinds.js";
import type { RowSource } from "./batch-rows.js";
import { HeldRows } from "./held-rows.js";
import { columnOf, rowInput } from "./row-input.js";

export const BATCH_STATES = [
  "validating",
  "queued",
  "running",
  "completed",
  "completed_with_failures",
  "cancelled",
] as const;
export type BatchState = (typeof BATCH_STATES)[number];

export interface BatchStatus {
  readonly batchId: string;
  readonly account: string;
  readonly kind: BatchKind;
  readonly state: BatchState;
  /** Rows in the file. */
  readonly rows: number;
  /** Rows enqueued; the others were invalid or duplicates (accepted with allowPartial). */
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
  /** From creation to the last result (or to now while running). */
  readonly durationMs: number;
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
  /** The batch's status; absent on a dry run. */
  readonly status: BatchStatus | undefined;
}

export interface CancelReport {
  readonly batchId: string;
  /** Jobs removed before they were sent: their result is `cancelled`. */
  readonly cancelled: number;
  /** Jobs being processed at the time: each ends `cancelled` if its request had not left yet. */
  readonly inFlight: number;
  /** Jobs that already had their terminal result. */
  readonly finished: number;
  readonly status: BatchStatus;
}

export interface BatchesOptions {
  readonly connection: Redis;
  readonly prefix: string;
  readonly producer: Producer;
  readonly results: ResultsStore;
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

/** Claims references for a batch; returns the 1-based positions already held by another batch. */
const CLAIM_SCRIPT = `
local taken = {}
for i = 1, #ARGV - 1 do
  local ok = redis.call('HSETNX', KEYS[1], ARGV[i + 1], ARGV[1])
  if ok == 0 and redis.call('HGET', KEYS[1], ARGV[i + 1]) ~= ARGV[1] then
    taken[#taken + 1] = i
  end
end
return taken`;

/** Sets each row's line unless it has one: a resumed submission keeps results already in. */
const ROWS_SCRIPT = `
for i = 1, #ARGV, 2 do redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1]) end
return 1`;

/** Ends validation: queued, or finished already if every job has its result. */
const QUEUED_SCRIPT = `
local m = redis.call('HMGET', KEYS[1], 'state', 'accepted', 'done', 'n:succeeded', 'skipped')
if m[1] ~= 'validating' then return m[1] end
if tonumber(m[3]) >= tonumber(m[2]) then
  local ok = tonumber(m[4]) == tonumber(m[2]) and tonumber(m[5]) == 0
  local state = ok and 'completed' or 'completed_with_failures'
  redis.call('HSET', KEYS[1], 'state', state, 'finishedAt', ARGV[1])
  return state
end
redis.call('HSET', KEYS[1], 'state', 'queued')
return 'queued'`;

/** Marks a batch cancelled unless it finished; returns the state it had. */
const CANCEL_SCRIPT = `
local state = redis.call('HGET', KEYS[1], 'state')
if state == 'validating' or state == 'queued' or state == 'running' then
  redis.call('HSET', KEYS[1], 'state', 'cancelled', 'cancelledAt', ARGV[1])
end
return state`;

type BatchRedis = Redis & {
  moneyqClaimReferences(key: string, batchId: string, ...refs: string[]): Promise<number[]>;
  moneyqSetRows(key: string, ...fieldsAndValues: string[]): Promise<number>;
  moneyqBatchQueued(key: string, now: string): Promise<string>;
  moneyqCancelBatch(key: string, now: string): Promise<string | null>;
};

/**
 * Bulk batches: every row validated before anything is enqueued, keys derived from account,
 * batch id and reference, duplicates refused (in the file and against earlier batches of
 * the account), a state with counters kept by the results script, a report, and cancel.
 */
export class Batches {
  readonly #redis: BatchRedis;
  readonly #options: BatchesOptions;

  constructor(options: BatchesOptions) {
    const redis = options.connection;
    if (!("moneyqClaimReferences" in redis)) {
      redis.defineCommand("moneyqClaimReferences", { numberOfKeys: 1, lua: CLAIM_SCRIPT });
      redis.defineCommand("moneyqSetRows", { numberOfKeys: 1, lua: ROWS_SCRIPT });
      redis.defineCommand("moneyqBatchQueued", { numberOfKeys: 1, lua: QUEUED_SCRIPT });
      redis.defineCommand("moneyqCancelBatch", { numberOfKeys: 1, lua: CANCEL_SCRIPT });
    }
    this.#redis = redis as BatchRedis;
    this.#options = options;
  }

  /**
   * Validates every row, then (unless a dry run) enqueues the batch. Throws BatchRefusedError
   * listing every bad row when any row is invalid or a duplicate and `allowPartial` is off.
   */
  async submit(options: SubmitOptions): Promise<SubmitReport> {
    const { account, kind } = options;
    const { rows, held, issues } = await this.#read(options);
    const batchId = options.batchId ?? this.#batchIdOf(account, options.source.digest());
    const earlier = await this.#heldElsewhere(account, batchId, held);
    let valid: number[] = [];
    for (let i = 0; i < held.length; i += 1) {
      const owner = earlier.get(i);
      if (owner === undefined) valid.push(i);
      else issues.push(duplicateIssue(held, i, owner));
    }
    issues.sort((a, b) => a.row - b.row);
    const counts = () => {
      const bad = new Set(issues.map((i) => i.row));
      const duplicates = new Set(issues.filter((i) => i.type === "duplicate").map((i) => i.row))
        .size;
      return { rows, accepted: valid.length, invalid: bad.size - duplicates, duplicates };
    };
    if (options.dryRun) {
      return { batchId, dryRun: true, created: false, ...counts(), issues, status: undefined };
    }
    if ((issues.length > 0 && !options.allowPartial) || valid.length === 0)
      throw new BatchRefusedError(rows, issues);

    const keys = batchKeys(this.#options.prefix, batchId);
    const existing = await this.#redis.hget(keys.meta, "state");
    if (existing !== null && existing !== "validating") {
      return {
        batchId,
        dryRun: false,
        created: false,
        ...counts(),
        issues,
        status: await this.status(batchId),
      };
    }
    const raced = await this.#claim(account, batchId, held, valid);
    if (raced.size > 0) {
      for (const i of valid)
        if (raced.has(i)) issues.push(duplicateIssue(held, i, "another batch"));
      valid = valid.filter((i) => !raced.has(i));
      issues.sort((a, b) => a.row - b.row);
      if (!options.allowPartial || valid.length === 0) {
        await this.#release(account, held, valid);
        throw new BatchRefusedError(rows, issues);
      }
    }
    const summary = counts();
    if (existing === null) {
      await this.#redis.hset(keys.meta, {
        id: batchId,
        account,
        kind,
        state: "validating",
        rows,
        accepted: summary.accepted,
        invalid: summary.invalid,
        duplicates: summary.duplicates,
        skipped: summary.invalid + summary.duplicates,
        done: 0,
        createdAt: new Date().toISOString(),
        ...Object.fromEntries(RESULT_KINDS.map((k) => [`n:${k}`, 0])),
      });
    }
    await this.#writeIssueLines(keys.rows, issues);
    // A few chunks in flight at once: this process serialises the next chunk while Redis runs
    // the scripts of the last.
    const inFlight = new Set<Promise<unknown>>();
    for (let i = 0; i < valid.length; i += SEND_CHUNK) {
      if (inFlight.size >= SEND_CHUNKS_IN_FLIGHT) await Promise.race(inFlight);
      const chunk = valid.slice(i, i + SEND_CHUNK);
      const sent: Promise<unknown> = this.#sendChunk(
        { kind, account, batchId, rowsKey: keys.rows },
        held,
        chunk,
      ).finally(() => inFlight.delete(sent));
      inFlight.add(sent);
    }
    await Promise.all(inFlight);
    await this.#redis.moneyqBatchQueued(keys.meta, new Date().toISOString());
    return {
      batchId,
      dryRun: false,
      created: true,
      ...summary,
      issues,
      status: await this.status(batchId),
    };
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

  /** Keys a chunk of held rows, records their report lines and enqueues them. */
  async #sendChunk(
    batch: {
      readonly kind: BatchKind;
      readonly account: string;
      readonly batchId: string;
      readonly rowsKey: string;
    },
    held: Held,
    chunk: readonly number[],
  ): Promise<void> {
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
        } satisfies ReportLine),
      );
    }
    await this.#redis.moneyqSetRows(batch.rowsKey, ...lines);
    await this.#options.producer.enqueueEnvelopes(envelopes);
  }

  /** The batch's state and counters; BatchNotFoundError if there is none. */
  async status(batchId: string): Promise<BatchStatus> {
    const meta = await this.#redis.hgetall(batchKeys(this.#options.prefix, batchId).meta);
    if (meta.id === undefined) throw new BatchNotFoundError(batchId);
    const n = (field: string) => Number(meta[field] ?? 0);
    const accepted = n("accepted");
    const finished = n("done");
    const createdAt = meta.createdAt as string;
    const end = meta.finishedAt ? Date.parse(meta.finishedAt) : Date.now();
    return {
      batchId,
      account: meta.account as string,
      kind: meta.kind as BatchKind,
      state: meta.state as BatchState,
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
      durationMs: Math.max(0, end - Date.parse(createdAt)),
    };
  }

  /** The batch's account, for access checks; undefined if there is no such batch. */
  async accountOf(batchId: string): Promise<string | undefined> {
    const account = await this.#redis.hget(
      batchKeys(this.#options.prefix, batchId).meta,
      "account",
    );
    return account ?? undefined;
  }

  /** Every row's report line, in row order, read in chunks. */
  async *report(batchId: string): AsyncGenerator<ReportLine> {
    const { rows } = await this.status(batchId);
    const key = batchKeys(this.#options.prefix, batchId).rows;
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
  async cancel(batchId: string): Promise<CancelReport> {
    const keys = batchKeys(this.#options.prefix, batchId);
    const before = await this.#redis.moneyqCancelBatch(keys.meta, new Date().toISOString());
    if (before === null) throw new BatchNotFoundError(batchId);
    if (!["validating", "queued", "running"].includes(before))
      throw new BatchNotCancellableError(batchId, before);
    const status = await this.status(batchId);
    let cancelled = 0;
    let inFlight = 0;
    let finished = 0;
    for await (const line of this.report(batchId)) {
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
      // BullMQ removes a job only if no worker holds it: then it can never be sent.
      if (await this.#options.producer.remove(status.account, jobId)) {
        const now = new Date();
        await this.#options.results.emit({
          jobId,
          kind: BATCH_KINDS[status.kind].jobKind,
          account: status.account,
          idempotencyKey: line.idempotencyKey,
          batchId,
          row: line.row,
          ...(line.reference !== undefined && { reference: line.reference }),
          result: "cancelled",
          code: "batch_cancelled",
          message: "the batch was cancelled before this job was sent",
          attempts: 0,
          enqueuedAt: status.createdAt,
          finishedAt: now.toISOString(),
          durationMs: Math.max(0, now.getTime() - Date.parse(status.createdAt)),
        });
        cancelled += 1;
      } else inFlight += 1;
    }
    return { batchId, cancelled, inFlight, finished, status: await this.status(batchId) };
  }

  #batchIdOf(account: string, digest: string): string {
    return `b_${createHash("sha256").update(`${account}\u0000${digest}`).digest("hex").slice(0, 32)}`;
  }

  #refsKey(account: string): string {
    return `${this.#options.prefix}:refs:${account}`;
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

  async #release(account: string, held: Held, indices: readonly number[]): Promise<void> {
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

function duplicateIssue(held: Held, index: number, holder: string): RowIssue {
  return {
    type: "duplicate",
    row: held.row(index),
    reference: held.reference(index),
    column: "reference",
    rule: `reference already used by batch ${holder}`,
  };
}
