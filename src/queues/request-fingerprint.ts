import { hash } from "node:crypto";
import type { RedisConnection } from "../redis/connection.js";
import { fingerprintKey, type Keyspace, legacyJobKeys } from "../redis/keys.js";
import { redisContext } from "../redis/redis-context.js";
import { perSlotGroup, slotGroups } from "../redis/slot-groups.js";
import type { JobEnvelope } from "./job-envelope.js";

/** JSON with object keys sorted: the same request always writes the same text. */
function canonical(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  const entries = Object.keys(value)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`);
  return `{${entries.join(",")}}`;
}

/**
 * `value` with each decimal string under an `amount` key (a stable amount) in its shortest
 * form, so "1.50" and "1.5" are one request; everything else as it is.
 */
function withShortAmounts(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(withShortAmounts);
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([k, v]) => [
      k,
      k === "amount" && typeof v === "string" ? shortestDecimal(v) : withShortAmounts(v),
    ]),
  );
}

/** "001.500" as "1.5", "2.0" as "2"; any other text as it is. */
function shortestDecimal(text: string): string {
  const match = /^(\d+)(?:\.(\d*))?$/.exec(text);
  if (!match) return text;
  const whole = (match[1] as string).replace(/^0+(?=\d)/, "");
  const fraction = (match[2] ?? "").replace(/0+$/, "");
  return fraction === "" ? whole : `${whole}.${fraction}`;
}

/**
 * The fingerprint of what a job asks for: kind, the operation's request, batch id, reference
 * and metadata. Account and key are in the job id already; the row number is where the work
 * sat in a file, not part of the work.
 */
export function requestFingerprint(envelope: JobEnvelope): string {
  const { kind, request, batchId, reference, metadata } = envelope;
  // Money fields only: metadata is the caller's own and is compared as it is.
  const money = withShortAmounts(request);
  return hash(
    "sha256",
    canonical({ kind, request: money, batchId, reference, metadata }),
    "base64url",
  );
}

/** What a key's stored fingerprint says of a new request under it. */
export type KeyUse = "new" | "same" | "different";

/**
 * What a claim found for a key: `new` (free: this call holds it now), `replayed` (its job or
 * result exists and holds this same request), `pending` (this same request was claimed and its
 * job is not stored yet: enqueueing it again is harmless) or `different`.
 */
export type KeyClaim = "new" | "replayed" | "pending" | "different";

/**
 * A keyed request: its account and job id, the Redis keys of its job hash and result marker,
 * its fingerprint.
 */
export interface FingerprintEntry {
  readonly account: string;
  readonly jobId: string;
  readonly jobKey: string;
  readonly markerKey: string;
  readonly fingerprint: string;
}

type ScriptAnswer = [number, string?];

type FingerprintRedis = RedisConnection & {
  moneyqClaimFingerprints(...keysThenArgs: (string | number)[]): Promise<[number, ScriptAnswer[]]>;
  moneyqReleaseFingerprints(...keysThenArgs: (string | number)[]): Promise<number>;
};

/**
 * How long a claimed fingerprint is held before its job exists: longer than any addBulk of a
 * call takes, short enough that a claim whose job was never added (a crash between the two)
 * holds the key only briefly.
 */
export const CLAIM_HOLD_MS = 120_000;

/** The outcome of a claim: per entry what it found, and the entries this call now holds. */
export interface Claimed {
  readonly uses: KeyClaim[];
  /** Entries stored as new by this call: to release if their jobs are not added. */
  readonly fresh: FingerprintEntry[];
}

/**
 * The stored fingerprints of keyed requests, one Redis key per job id, always checked against
 * the job actually stored: a job's own envelope wins over a fingerprint that is missing or
 * disagrees, and a fingerprint with neither job nor result is only a claim in progress.
 */
export class RequestFingerprints {
  readonly #redis: FingerprintRedis;
  readonly #space: Keyspace;
  readonly #ttlMs: number;

  /** `ttlMs`: how long a replayed key's fingerprint is kept (longer than its job). */
  constructor(redis: RedisConnection, prefix: string, ttlMs: number) {
    this.#redis = redis as FingerprintRedis;
    this.#space = redisContext(redis, prefix).space;
    this.#ttlMs = ttlMs;
  }

  key(account: string, jobId: string): string {
    return fingerprintKey(this.#space, account, jobId);
  }

  /** Whether each of the account's job ids has a stored fingerprint. */
  async held(account: string, jobIds: readonly string[]): Promise<boolean[]> {
    const found = await this.#stored(jobIds.map((jobId) => ({ account, jobId })));
    return found.map((f) => f !== null);
  }

  /** Each job's stored fingerprint (one MGET), read where an earlier release kept it too. */
  async #stored(jobs: readonly { account: string; jobId: string }[]): Promise<(string | null)[]> {
    return perSlotGroup(
      this.#space,
      jobs,
      (j) => j.account,
      (group) => this.#storedIn(group),
    );
  }

  async #storedIn(jobs: readonly { account: string; jobId: string }[]): Promise<(string | null)[]> {
    const found = await this.#redis.mget(
      ...jobs.flatMap((j) => [
        this.key(j.account, j.jobId),
        legacyJobKeys.fingerprint(this.#space, j.account, j.jobId),
      ]),
    );
    return jobs.map((_, i) => found[2 * i] ?? found[2 * i + 1] ?? null);
  }

  /**
   * Reads without storing: what each request would be. One MGET; only a key whose stored
   * fingerprint is another one is looked at again against its job (the script, reading only).
   * A key without a fingerprint reads as new: a job stored without one (before fingerprints
   * were kept) is found when the key is claimed.
   */
  async check(entries: readonly FingerprintEntry[]): Promise<KeyUse[]> {
    if (entries.length === 0) return [];
    const held = await this.#stored(entries);
    const uses: KeyUse[] = held.map((h, i) =>
      h === null ? "new" : h === entries[i]?.fingerprint ? "same" : "different",
    );
    const doubtful = entries.filter((_, i) => uses[i] === "different");
    if (doubtful.length === 0) return uses;
    const again = await perSlotGroup(
      this.#space,
      doubtful,
      (e) => e.account,
      async (group) => (await this.#run("check", group, false)).uses,
    );
    let next = 0;
    return uses.map((u) => {
      if (u !== "different") return u;
      const use = again[next++];
      return use === "new" ? "new" : use === "different" ? "different" : "same";
    });
  }

  /**
   * Stores the new fingerprints, held CLAIM_HOLD_MS: once the job exists its own envelope
   * decides, and its terminal result keeps the fingerprint the full TTL. `strict`: if one definitely
   * differs, stores none of them; a difference found on a stored job's envelope afterwards is
   * answered too, and the caller releases `fresh`.
   */
  async claim(entries: readonly FingerprintEntry[], strict: boolean): Promise<Claimed> {
    const uses: KeyClaim[] = new Array(entries.length);
    const fresh: FingerprintEntry[] = [];
    await Promise.all(
      slotGroups(this.#space, entries, (e) => e.account).map(async (group) => {
        const run = await this.#run("claim", group.items, strict);
        group.indexes.forEach((index, n) => {
          uses[index] = run.uses[n] as KeyClaim;
          if (run.stored && run.uses[n] === "new") fresh.push(entries[index] as FingerprintEntry);
        });
      }),
    );
    return { uses, fresh };
  }

  /** Gives claims back (their jobs were not added): each is deleted if it still holds ours. */
  async release(entries: readonly FingerprintEntry[]): Promise<void> {
    await Promise.all(
      slotGroups(this.#space, entries, (e) => e.account).map(({ items }) =>
        this.#redis.moneyqReleaseFingerprints(
          items.length,
          ...items.map((e) => this.key(e.account, e.jobId)),
          ...items.map((e) => e.fingerprint),
        ),
      ),
    );
  }

  async #run(
    mode: "claim" | "check",
    entries: readonly FingerprintEntry[],
    strict: boolean,
  ): Promise<{ uses: KeyClaim[]; stored: boolean }> {
    if (entries.length === 0) return { uses: [], stored: false };
    const [stored, answers] = await this.#redis.moneyqClaimFingerprints(
      entries.length * 5,
      ...entries.flatMap((e) => [
        this.key(e.account, e.jobId),
        e.jobKey,
        e.markerKey,
        legacyJobKeys.fingerprint(this.#space, e.account, e.jobId),
        legacyJobKeys.resultMarker(this.#space, e.account, e.jobId),
      ]),
      mode,
      String(CLAIM_HOLD_MS),
      String(this.#ttlMs),
      strict ? "1" : "0",
      ...entries.map((e) => e.fingerprint),
    );
    const uses: KeyClaim[] = [];
    const repaired: FingerprintEntry[] = [];
    answers.forEach(([code, data], i) => {
      const entry = entries[i] as FingerprintEntry;
      if (code === 3) {
        const same = storedFingerprint(data ?? "") === entry.fingerprint;
        uses.push(same ? "replayed" : "different");
        if (same) repaired.push(entry);
      } else uses.push(CODES[code] as KeyClaim);
    });
    // The job holds this request: its fingerprint is stored again, right this time.
    if (mode === "claim" && repaired.length > 0) {
      const pipeline = this.#redis.pipeline();
      for (const e of repaired)
        pipeline.set(this.key(e.account, e.jobId), e.fingerprint, "PX", this.#ttlMs);
      await pipeline.exec();
    }
    return { uses, stored: stored === 1 };
  }
}

const CODES: readonly KeyClaim[] = ["new", "replayed", "different", "different", "pending"];

/** The fingerprint of a stored job's envelope (its `data` field); undefined if it has none. */
function storedFingerprint(data: string): string | undefined {
  try {
    const envelope = (JSON.parse(data) as { envelope?: JobEnvelope }).envelope;
    return envelope === undefined ? undefined : requestFingerprint(envelope);
  } catch {
    return undefined;
  }
}
