import { type PaymentRepeatsPolicy, paymentRepeatsOf } from "../config/load-config.js";
import { bullKeys } from "../redis/bullmq-internals.js";
import type { RedisConnection } from "../redis/connection.js";
import { type Keyspace, paymentRepeatKeys, resultMarkerKey } from "../redis/keys.js";
import { redisContext } from "../redis/redis-context.js";
import { jobIdFor } from "./idempotency-key.js";
import type { JobEnvelope } from "./job-envelope.js";
import { paymentFingerprint } from "./payment-fingerprint.js";
import { accountQueueName } from "./queue-names.js";

/**
 * Where a payment that repeats another one was met: the other payment's batch and row (or
 * none, a job enqueued alone), its job and key, when it was enqueued, and whether it was
 * `paid`, is `queued` (not finished yet), is `unconfirmed` (needs reconciliation: it may have
 * been paid), or is a row of the same file (`in_file`).
 */
export interface PaymentMatch {
  readonly state: "paid" | "queued" | "unconfirmed" | "in_file";
  readonly batchId?: string | undefined;
  readonly row?: number | undefined;
  readonly jobId?: string | undefined;
  readonly idempotencyKey?: string | undefined;
  /** When the other payment was enqueued (ISO time). */
  readonly at?: string | undefined;
}

/** A payment to look for: its fingerprint's digest, and its own job (never its own repeat). */
export interface PaymentProbe {
  readonly digest: string;
  readonly jobId: string;
  /** Its batch: that batch's records are its own rows, reported as `in_file` instead. */
  readonly batchId?: string | undefined;
}

/** A payment's record under its fingerprint (JSON in the fingerprint's hash). */
interface PaymentRecord {
  readonly b?: string;
  readonly r?: number | undefined;
  readonly k: string;
  readonly at: number;
  /** queued, paid or ended (the emit-results script marks it). */
  readonly s: "queued" | "paid" | "ended";
}

/** At most this many matches are told per payment, newest first. */
const MATCHES_TOLD = 5;
/**
 * A fingerprint keeps its newest this many payments: more of one payment in a window than this
 * say "repeated" as well, and a fingerprint's read stays small.
 */
const RECORDS_KEPT = 1_000;
/** Fingerprints read per pipeline. */
const READ_CHUNK = 500;

type RepeatsRedis = RedisConnection & {
  moneyqRecordPaymentRepeats(keyCount: number, ...keysAndArgs: string[]): Promise<number>;
};

/**
 * The payments of each account by payment fingerprint, over its repeat window: recorded as
 * they are enqueued, marked paid or ended as their results are recorded (emit-results), and
 * read by a batch's submission and a job enqueued alone to find the same payment made under
 * another key (docs/safety.md, "Repeated payments").
 */
export class PaymentRepeats {
  readonly #redis: RepeatsRedis;
  readonly #space: Keyspace;
  readonly #policies: ReadonlyMap<string, PaymentRepeatsPolicy> | undefined;

  constructor(
    redis: RedisConnection,
    prefix: string,
    policies: ReadonlyMap<string, PaymentRepeatsPolicy> | undefined,
  ) {
    this.#redis = redis as RepeatsRedis;
    this.#space = redisContext(redis, prefix).space;
    this.#policies = policies;
  }

  /** The account's policy on repeated payments (its own, or the default). */
  policyOf(account: string): PaymentRepeatsPolicy {
    return paymentRepeatsOf(this.#policies, account);
  }

  /** Records the enqueued jobs that make a payment, one script call per account. */
  async record(envelopes: readonly JobEnvelope[]): Promise<void> {
    const now = Date.now();
    const payments = envelopes.flatMap((e) => {
      const digest = paymentFingerprint(e.kind, e.request);
      return digest === undefined ? [] : [{ e, digest }];
    });
    const byAccount = new Map<string, typeof payments>();
    for (const p of payments) {
      const list = byAccount.get(p.e.account);
      if (list) list.push(p);
      else byAccount.set(p.e.account, [p]);
    }
    await Promise.all(
      [...byAccount].map(([account, list]) => {
        const keys = list.flatMap((p) => {
          const { records, times } = paymentRepeatKeys(this.#space, account, p.digest);
          return [records, times];
        });
        const args = list.flatMap(({ e }) => [
          jobIdFor(account, e.idempotencyKey),
          JSON.stringify({
            ...(e.batchId !== undefined && { b: e.batchId, r: e.row }),
            k: e.idempotencyKey,
            at: now,
            s: "queued",
          } satisfies PaymentRecord),
        ]);
        const window = String(this.policyOf(account).windowMs);
        return this.#redis.moneyqRecordPaymentRepeats(
          keys.length,
          ...keys,
          String(now),
          window,
          String(RECORDS_KEPT),
          ...args,
        );
      }),
    );
  }

  /**
   * For each probe of `account`, the other payments with its fingerprint within the window
   * (none of its own job or batch), paid, queued or unconfirmed, newest first.
   */
  async find(account: string, probes: readonly PaymentProbe[]): Promise<PaymentMatch[][]> {
    const since = Date.now() - this.policyOf(account).windowMs;
    const digests = [...new Set(probes.map((p) => p.digest))];
    const stored = new Map<string, Map<string, PaymentRecord>>();
    for (let i = 0; i < digests.length; i += READ_CHUNK) {
      const chunk = digests.slice(i, i + READ_CHUNK);
      const multi = this.#redis.multi();
      for (const d of chunk) multi.hgetall(paymentRepeatKeys(this.#space, account, d).records);
      const answers = (await multi.exec()) ?? [];
      chunk.forEach((d, j) => {
        const [error, fields] = answers[j] ?? [];
        if (error) throw error;
        stored.set(d, recordsOf(fields as Record<string, string>, since));
      });
    }
    const candidates = probes.map((p) =>
      [...(stored.get(p.digest) ?? [])].filter(
        ([jobId, r]) => jobId !== p.jobId && (p.batchId === undefined || r.b !== p.batchId),
      ),
    );
    // A record marked paid is paid, whatever is left of its job; the others are looked up.
    const unpaid = candidates.flat().filter(([, r]) => r.s !== "paid");
    const states = await this.#statesOf(account, new Set(unpaid.map(([id]) => id)));
    return candidates.map((list) =>
      list
        .flatMap(([jobId, r]) => {
          const state = r.s === "paid" ? "paid" : states.get(jobId);
          return state === undefined ? [] : [matchOf(jobId, r, state)];
        })
        .sort((a, b) => String(b.at).localeCompare(String(a.at)))
        .slice(0, MATCHES_TOLD),
    );
  }

  /**
   * Where each recorded job stands: paid as recorded, else as its result marker says (a
   * result that paid nothing is left out), else queued while its job exists.
   */
  async #statesOf(
    account: string,
    jobIds: ReadonlySet<string>,
  ): Promise<Map<string, PaymentMatch["state"]>> {
    const out = new Map<string, PaymentMatch["state"]>();
    const ids = [...jobIds];
    if (ids.length === 0) return out;
    const queue = bullKeys.queue(this.#space.prefix, accountQueueName(this.#space, account));
    for (let i = 0; i < ids.length; i += READ_CHUNK) {
      const chunk = ids.slice(i, i + READ_CHUNK);
      const multi = this.#redis.multi();
      for (const id of chunk)
        multi.get(resultMarkerKey(this.#space, account, id)).exists(bullKeys.job(queue, id));
      const answers = (await multi.exec()) ?? [];
      chunk.forEach((id, j) => {
        const marker = answers[2 * j]?.[1] as string | null;
        const exists = answers[2 * j + 1]?.[1] === 1;
        const state = stateOf(marker, exists);
        if (state !== undefined) out.set(id, state);
      });
    }
    return out;
  }

  /** The window of `account` in whole days or hours, as a sentence says it. */
  windowText(account: string): string {
    return windowText(this.policyOf(account).windowMs);
  }
}

/** A window as a sentence says it: "7 days", "12 hours", "1 minute". */
export function windowText(ms: number): string {
  const [size, unit] =
    ms >= 86_400_000
      ? [ms / 86_400_000, "day"]
      : ms >= 3_600_000
        ? [ms / 3_600_000, "hour"]
        : [Math.max(1, ms / 60_000), "minute"];
  const n = Number(size.toFixed(2));
  return `${n} ${unit}${n === 1 ? "" : "s"}`;
}

/** The records of a fingerprint's hash within the window that still count (not ended). */
function recordsOf(fields: Record<string, string>, since: number): Map<string, PaymentRecord> {
  const out = new Map<string, PaymentRecord>();
  for (const [jobId, json] of Object.entries(fields ?? {})) {
    let record: PaymentRecord;
    try {
      record = JSON.parse(json) as PaymentRecord;
    } catch {
      continue;
    }
    if (record.at >= since && record.s !== "ended") out.set(jobId, record);
  }
  return out;
}

/**
 * A recorded job's state from its result marker and whether its job exists: undefined when it
 * paid nothing (failed, rejected, cancelled) or is gone without a result.
 */
function stateOf(marker: string | null, exists: boolean): PaymentMatch["state"] | undefined {
  if (marker === null) return exists ? "queued" : undefined;
  let result: string | undefined;
  try {
    result = (JSON.parse(marker) as { result?: string }).result;
  } catch {
    return "unconfirmed";
  }
  if (result === "succeeded") return "paid";
  if (result === "needs_reconciliation") return "unconfirmed";
  return undefined;
}

function matchOf(jobId: string, r: PaymentRecord, state: PaymentMatch["state"]): PaymentMatch {
  return {
    state,
    ...(r.b !== undefined && { batchId: r.b, row: r.r }),
    jobId,
    idempotencyKey: r.k,
    at: new Date(r.at).toISOString(),
  };
}
