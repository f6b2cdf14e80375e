import { setTimeout as sleep } from "node:timers/promises";
import { PaymentsRateLimitError } from "../client/errors.js";
import type { PaymentsClient } from "../client/payments-client.js";
import type { AccountConfig } from "../config/load-config.js";
import { MoneyqError } from "../errors/moneyq-error.js";
import { valueAt } from "../provider/paths.js";
import { LIST_ITEM_FIELDS, type ListOperation, type ProviderProfile } from "../provider/profile.js";
import { listItems, readListItem, statusMeaning } from "../provider/read-answer.js";
import { jobIdFor } from "../queues/idempotency-key.js";
import { JOB_KINDS, type JobKind } from "../queues/job-kinds.js";
import { decimalText, unitsOf } from "../queues/job-money.js";
import type { RedisConnection } from "../redis/connection.js";
import { type Keyspace, successesKey, upstreamIdKey } from "../redis/keys.js";
import type { JobResult } from "../results/job-result.js";
import { RESOLVABLE, type Resolutions } from "../results/resolutions.js";
import type { ResultsStore } from "../results/results-store.js";
import type { Reversals } from "../results/reversals.js";
import { rateLimitPauseMs } from "./classify.js";
import { type BookedJob, judge, type ProviderRecord } from "./drift.js";
import type { RateGate } from "./rate-gate.js";
import { takeReadSlot } from "./read-slot.js";
import {
  type DriftItem,
  SWEEP_LEASE_MS,
  type SweepCursor,
  SweepState,
  type SweepSummary,
} from "./sweep-state.js";

/** The lists a sweep reads, in order, and the kinds whose jobs each holds. */
export const SWEPT_LISTS: readonly ListOperation[] = [
  "listTransactions",
  "listStableTransactions",
  "listOrders",
];
const LIST_OF_LOOKUP: Record<string, ListOperation> = {
  transaction: "listTransactions",
  "stable-transaction": "listStableTransactions",
  order: "listOrders",
};
/** A stable transaction list's page size (the spec's largest, 4.13). */
const PAGE_SIZE = 100;
/** Records are matched a little beyond the window: a payout made at its edge is not missing. */
const EDGE_MS = 10 * 60_000;
/** A page the rate gate holds back (a pause, a late slot) waits at most this long in all. */
const MAX_WAIT_MS = 60_000;

export interface SweepDeps {
  readonly connection: RedisConnection;
  readonly space: Keyspace;
  readonly gate: RateGate;
  readonly results: ResultsStore;
  readonly reversals: Reversals;
  readonly resolutions: Resolutions;
  /** Appends a drift item's event to the account's results stream (and so its webhooks). */
  readonly announce: (item: DriftItem) => Promise<void>;
  /** How late after its slot a request may still leave (half the rate window's margin). */
  readonly toleranceMs: number;
}

/** What one sweep of an account did. */
export interface SweepReport {
  readonly account: string;
  readonly since: string;
  readonly until: string;
  /** Whether it resumed a sweep a stopped process began. */
  readonly resumed: boolean;
  readonly items: readonly DriftItem[];
  readonly resolved: number;
  readonly reversed: number;
  /** Provider records read (in the window and at its edges). */
  readonly records: number;
}

/** Why a sweep did not run: another process sweeps the account, or its lease was lost. */
export class SweepBusyError extends MoneyqError {
  readonly code = "sweep_busy";
  constructor(account: string) {
    super(`another process is sweeping account ${account}; try again when it has finished`);
  }
}

/**
 * One reconciliation sweep of an account over a window (docs/reconciliation.md, "The sweep"):
 * it pages through the provider's lists through the account's rate gate (the bulk lane: below
 * every confirmation and urgent job), sets each record against moneyq's books (drift.ts), and
 * records what it finds: drift items (once each, each found reported), resolutions and
 * reversals the records prove. One process at a time per account (a lease); a sweep a process
 * stopped in is resumed where it stood, by the next one for the account.
 */
export async function sweepAccount(
  deps: SweepDeps,
  account: AccountConfig,
  client: PaymentsClient,
  window: { readonly since: string; readonly until: string },
  options: { readonly queueKey?: string | undefined; readonly waitForLockMs?: number } = {},
): Promise<SweepReport> {
  const state = new SweepState(deps.connection, deps.space, account.alias);
  await lockOrWait(state, account.alias, options.waitForLockMs ?? 0);
  const lease = keepLease(state);
  try {
    const open = await state.cursor();
    const resumed = open !== undefined;
    const cursor = open ?? (await state.begin(window.since, window.until));
    const run = new Sweep(deps, account, client, state, cursor, options.queueKey, lease);
    await run.readLists();
    await run.findMissing();
    const items = await state.foundItems();
    await state.finish(summaryOf(cursor, items, run));
    return {
      account: account.alias,
      since: cursor.since,
      until: cursor.until,
      resumed,
      items,
      resolved: run.resolved,
      reversed: run.reversed,
      records: run.records,
    };
  } finally {
    lease.stop();
    await state.unlock();
  }
}

/** Takes the account's sweep lease, waiting up to `waitMs` for another process's to end or lapse. */
async function lockOrWait(state: SweepState, account: string, waitMs: number): Promise<void> {
  const until = Date.now() + waitMs;
  for (;;) {
    if (await state.lock()) return;
    if (Date.now() >= until) throw new SweepBusyError(account);
    await sleep(500);
  }
}

/** The lease kept while a sweep runs; `lost` once a renewal failed (another process has it). */
interface Lease {
  readonly lost: () => boolean;
  stop(): void;
}

function keepLease(state: SweepState): Lease {
  let lost = false;
  const timer = setInterval(() => {
    state.renew().then(
      (held) => {
        if (!held) lost = true;
      },
      () => undefined,
    );
  }, SWEEP_LEASE_MS / 3);
  timer.unref();
  return { lost: () => lost, stop: () => clearInterval(timer) };
}

/** The counts a finished sweep leaves for the metrics. */
function summaryOf(cursor: SweepCursor, items: readonly DriftItem[], run: Sweep): SweepSummary {
  const drift: Record<string, { items: number; units: bigint; scale: number }> = {};
  for (const item of items) {
    const key = `${item.kind} ${item.currency ?? "unknown"}`;
    const entry = drift[key] ?? { items: 0, units: 0n, scale: 0 };
    drift[key] = entry;
    entry.items += 1;
    const amount = item.amount === undefined ? undefined : decimalText(item.amount);
    if (amount !== undefined) {
      const scale = Math.max(entry.scale, amount.split(".")[1]?.length ?? 0);
      entry.units = entry.units * 10n ** BigInt(scale - entry.scale) + unitsOf(amount, scale);
      entry.scale = scale;
    }
  }
  const text = (units: bigint, scale: number) =>
    scale === 0
      ? units.toString()
      : `${units / 10n ** BigInt(scale)}.${(units % 10n ** BigInt(scale)).toString().padStart(scale, "0")}`;
  return {
    finishedAt: new Date().toISOString(),
    since: cursor.since,
    until: cursor.until,
    drift: Object.fromEntries(
      Object.entries(drift).map(([k, v]) => [
        k,
        { items: v.items, amount: text(v.units, v.scale) },
      ]),
    ),
    resolved: run.resolved,
    reversed: run.reversed,
  };
}

/** One sweep under way: the lists read page by page, each record judged and acted on. */
class Sweep {
  resolved = 0;
  reversed = 0;
  records = 0;
  readonly #deps: SweepDeps;
  readonly #account: AccountConfig;
  readonly #client: PaymentsClient;
  readonly #state: SweepState;
  readonly #cursor: SweepCursor;
  readonly #queueKey: string | undefined;
  readonly #lease: Lease;

  constructor(
    deps: SweepDeps,
    account: AccountConfig,
    client: PaymentsClient,
    state: SweepState,
    cursor: SweepCursor,
    queueKey: string | undefined,
    lease: Lease,
  ) {
    this.#deps = deps;
    this.#account = account;
    this.#client = client;
    this.#state = state;
    this.#cursor = cursor;
    this.#queueKey = queueKey;
    this.#lease = lease;
  }

  /** Every list from where the cursor stands, a page at a time; the cursor moves after each. */
  async readLists(): Promise<void> {
    for (let list = this.#cursor.list; list < SWEPT_LISTS.length; list += 1) {
      const operation = SWEPT_LISTS[list] as ListOperation;
      let page = list === this.#cursor.list ? this.#cursor.page : 1;
      for (;;) {
        const items = await this.#page(operation, page);
        for (const item of items) {
          if (this.#lease.lost()) throw new SweepBusyError(this.#account.alias);
          await this.#record(operation, item);
        }
        const more = operation === "listStableTransactions" && items.length >= PAGE_SIZE;
        page += 1;
        await this.#state.advance(more ? list : list + 1, more ? page : 1);
        if (!more) break;
      }
    }
  }

  /** One page of a list over the window and its edges, through the account's rate gate. */
  async #page(operation: ListOperation, page: number): Promise<readonly unknown[]> {
    const since = new Date(Date.parse(this.#cursor.since) - EDGE_MS).toISOString();
    const until = new Date(Date.parse(this.#cursor.until) + EDGE_MS).toISOString();
    const query =
      operation === "listStableTransactions"
        ? { since, until, page, pageSize: PAGE_SIZE }
        : { since, until };
    const answer = await this.#send(operation, { query });
    const { profile, adapter } = this.#client;
    return listItems(profile, operation, answer.data, adapter) ?? [];
  }

  /** Sends one read when the gate gives it a slot; a 429 pauses the account and is waited out. */
  async #send(operation: ListOperation, input: unknown) {
    let waited = 0;
    for (;;) {
      const slot = await takeReadSlot(this.#deps.gate, {
        account: this.#account.alias,
        perSecond: this.#account.ratePerSecond,
        lane: "bulk",
        queueKey: this.#queueKey,
        toleranceMs: this.#deps.toleranceMs,
      });
      let waitMs = 0;
      if (slot.send) {
        try {
          return await this.#client.send(operation, input as never);
        } catch (error) {
          if (!(error instanceof PaymentsRateLimitError)) throw error;
          waitMs = rateLimitPauseMs(error.retryAfterMs);
          await this.#deps.gate.pause(this.#account.alias, waitMs);
        }
      } else if ("held" in slot) throw new Error(`account ${this.#account.alias} is paused`);
      else waitMs = "pausedMs" in slot ? slot.pausedMs : 100;
      waited += waitMs;
      if (waited > MAX_WAIT_MS) throw new Error(`account ${this.#account.alias} stayed paused`);
      await sleep(waitMs);
    }
  }

  /** One provider record, against moneyq's books. */
  async #record(operation: ListOperation, listed: unknown): Promise<void> {
    const record = readRecord(this.#client, operation, listed);
    if (record === undefined) return;
    this.records += 1;
    await this.#state.saw([`${operation} ${record.id}`]);
    if (!this.#inWindow(record)) return;
    const job = await this.#booked(record);
    const verdict = judge(record, job?.booked);
    if (job !== undefined && verdict.resolveTo !== undefined) {
      const done = await this.#deps.resolutions.resolve(job.result, {
        to: verdict.resolveTo,
        resolver: { by: "sweep" },
        upstreamId: record.id,
        evidence: { provider: { ...record } },
      });
      if (done) this.resolved += 1;
    }
    if (job !== undefined && verdict.reverse === true) {
      const { status, reversedBy } = record;
      const done = await this.#deps.reversals.record(job.result, {
        ...(status !== undefined && { status }),
        ...(reversedBy !== undefined && { reversedBy }),
        foundBy: "sweep",
      });
      if (done) this.reversed += 1;
    }
    if (verdict.drift === undefined) return;
    const item: DriftItem = {
      id: `${verdict.drift}:${record.id}`,
      kind: verdict.drift,
      account: this.#account.alias,
      currency: record.currency ?? job?.booked.money?.currency,
      amount: record.amount ?? job?.booked.money?.amount,
      ...(job !== undefined && { moneyq: moneyqSide(job.result, job.booked) }),
      provider: { list: operation, ...record },
      foundAt: new Date().toISOString(),
    };
    if (await this.#state.found(item)) await this.#deps.announce(item);
  }

  /** Whether a record's time falls in the window (one without a readable time does). */
  #inWindow(record: ProviderRecord): boolean {
    const at = record.createdAt === undefined ? Number.NaN : Date.parse(record.createdAt);
    if (Number.isNaN(at)) return true;
    return at >= Date.parse(this.#cursor.since) && at < Date.parse(this.#cursor.until);
  }

  /** The job a record belongs to: by the provider's id, else by the key it echoes. */
  async #booked(record: ProviderRecord) {
    const { results } = this.#deps;
    const alias = this.#account.alias;
    const indexed = await this.#deps.connection.get(
      upstreamIdKey(this.#deps.space, alias, record.id),
    );
    const entry =
      indexed === null ? undefined : (JSON.parse(indexed) as { j: string; c?: string; a?: string });
    const jobId =
      entry?.j ?? (record.reference === undefined ? undefined : jobIdFor(alias, record.reference));
    const result = jobId === undefined ? undefined : await results.get(alias, jobId);
    if (result === undefined) return undefined;
    const booked: BookedJob = {
      jobId: result.jobId,
      result: result.result,
      ...(entry?.c !== undefined &&
        entry.a !== undefined && { money: { currency: entry.c, amount: entry.a } }),
      resolved: (await this.#deps.resolutions.of(alias, result.jobId)) !== undefined,
      reversed: (await results.reversalOf(alias, result.jobId)) !== undefined,
    };
    return { result, booked };
  }

  /** moneyq's successes in the window that no list held: missing at the provider. */
  async findMissing(): Promise<void> {
    const { connection, results, space } = this.#deps;
    const alias = this.#account.alias;
    const since = Date.parse(this.#cursor.since);
    const until = Date.parse(this.#cursor.until);
    const ids = await connection.zrangebyscore(successesKey(space, alias), since, `(${until}`);
    for (const jobId of ids) {
      const result = await results.get(alias, jobId);
      const list = result && listOfKind(result.kind);
      if (!result || list === undefined || result.upstreamId === undefined) continue;
      if (await this.#state.seen(`${list} ${result.upstreamId}`)) continue;
      const item: DriftItem = {
        id: `missing_at_provider:${jobId}`,
        kind: "missing_at_provider",
        account: alias,
        moneyq: moneyqSide(result, undefined),
        foundAt: new Date().toISOString(),
      };
      if (await this.#state.found(item)) await this.#deps.announce(item);
    }
  }
}

/** The list a job of `kind` is found in; undefined for a creation without a lookup. */
function listOfKind(kind: string): ListOperation | undefined {
  const lookup = JOB_KINDS[kind as JobKind]?.lookup;
  return lookup === undefined ? undefined : LIST_OF_LOOKUP[lookup];
}

/** moneyq's evidence of a drift item: the job and its result as recorded. */
function moneyqSide(result: JobResult, booked: BookedJob | undefined): Record<string, unknown> {
  const { upstreamData: _, ...recorded } = result;
  return {
    ...recorded,
    ...(booked?.money !== undefined && { money: booked.money }),
    resolvable: RESOLVABLE.has(result.result),
  };
}

const text = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim() !== ""
    ? value.trim()
    : typeof value === "number" && Number.isFinite(value)
      ? String(value)
      : undefined;

/** A list item as a provider record: its id, status and meaning, and what reconciliation reads. */
function readRecord(
  client: PaymentsClient,
  operation: ListOperation,
  item: unknown,
): ProviderRecord | undefined {
  const { profile, adapter } = client;
  const fields = readListItem(profile, operation, item, adapter);
  if (fields.id === undefined) return undefined;
  const extra = extraFields(profile, operation, item);
  const byWord = fields.status === undefined ? "unknown" : statusMeaning(profile, fields.status);
  const meaning = fields.reversedBy !== undefined && byWord === "succeeded" ? "reversed" : byWord;
  return {
    id: fields.id,
    status: fields.status,
    meaning,
    ...(fields.reversedBy !== undefined && { reversedBy: fields.reversedBy }),
    ...extra,
  };
}

/** The fields of a list item the profile's list shape names: amount, currency, type... */
function extraFields(
  profile: ProviderProfile,
  operation: ListOperation,
  item: unknown,
): Partial<ProviderRecord> {
  const shape = profile.lists[operation];
  const out: Record<string, string> = {};
  for (const field of LIST_ITEM_FIELDS) {
    const path = shape[field];
    const value = path === undefined ? undefined : text(valueAt(item, path));
    if (value !== undefined) out[field] = value;
  }
  return out;
}
