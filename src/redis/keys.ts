/**
 * Every Redis key moneyq reads or writes, spelled here and nowhere else. An account alias and a
 * batch id have no ':', and each kind of key has its own namespace, so no alias or id can reach
 * another's keys. BullMQ's own keys (a queue's job hashes, locks and lanes) are spelled here
 * too, as BullMQ names them, for the scripts that check them.
 *
 * On a Redis Cluster every key of an account's work carries the account as its hash tag
 * (`<prefix>:rate:{acme}`, and the queue `payments-{acme}`), so that one account's keys share
 * a slot (every script touches one account) and different accounts spread over the shards.
 * On a single Redis the keys are spelled as they always were.
 */

/** Where moneyq's keys live: the prefix (config.redisPrefix) and whether Redis is a cluster. */
export interface Keyspace {
  readonly prefix: string;
  readonly cluster: boolean;
}

/** The keyspace under `prefix`, on a cluster or a single Redis. */
export function keyspace(prefix: string, cluster = false): Keyspace {
  return Object.freeze({ prefix, cluster });
}

/** An account as its keys spell it: its hash tag on a cluster. */
export function accountTag(space: Keyspace, account: string): string {
  return space.cluster ? `{${account}}` : account;
}

/**
 * The results stream an account's terminal results are appended to: one stream for every
 * account on a single Redis, one per account on a cluster (a stream is one key, so one shared
 * stream would be one hot shard and could never be written with an account's other keys).
 */
export function resultsStreamKey(space: Keyspace, account: string): string {
  const { prefix } = space;
  return space.cluster ? `${prefix}:results:${accountTag(space, account)}` : `${prefix}:results`;
}

/** A job's result marker: its terminal result, set once. */
export function resultMarkerKey(space: Keyspace, account: string, jobId: string): string {
  return `${space.prefix}:result:${accountTag(space, account)}:${jobId}`;
}

/** An account's reconciliation backlog: ids of its jobs whose last result is needs_reconciliation. */
export function backlogKey(space: Keyspace, account: string): string {
  return `${space.prefix}:needs-reconciliation:${accountTag(space, account)}`;
}

/**
 * A short-lived key of the account's slot, written just before a `WAIT`: the write sets the
 * connection's replication offset to the master's, so the `WAIT` covers every write the master
 * took before it, from any connection (a `WAIT` counts only up to its own connection's last write).
 */
export function replicationMarkKey(space: Keyspace, account: string): string {
  return `${space.prefix}:replicated:${accountTag(space, account)}`;
}

/** The fingerprint of the request stored under a job id (its account and idempotency key). */
export function fingerprintKey(space: Keyspace, account: string, jobId: string): string {
  return `${space.prefix}:fp:${accountTag(space, account)}:${jobId}`;
}

/**
 * Keys of a job that earlier releases spelled without its account. Result markers and
 * fingerprints are still read there (never written) until they expire, at most twice
 * MONEYQ_RETENTION_MS after the upgrade; account pauses are moved at start. A cluster never
 * ran those releases: there each stands for the job's current key (same slot; reading a key
 * twice changes nothing).
 */
export const legacyJobKeys = {
  resultMarker: (space: Keyspace, account: string, jobId: string): string =>
    space.cluster ? resultMarkerKey(space, account, jobId) : `${space.prefix}:result:${jobId}`,
  fingerprint: (space: Keyspace, account: string, jobId: string): string =>
    space.cluster ? fingerprintKey(space, account, jobId) : `${space.prefix}:fp:${jobId}`,
  /** Hash: account → why and when it was paused (single Redis only). */
  pausedAccounts: (prefix: string): string => `${prefix}:paused-accounts`,
};

/**
 * The Redis keys of one batch. They belong to its account: the same id in two accounts is two
 * batches.
 */
export function batchKeys(space: Keyspace, account: string, batchId: string) {
  return {
    meta: `${space.prefix}:batch:${accountTag(space, account)}:${batchId}`,
    rows: `${space.prefix}:batch-rows:${accountTag(space, account)}:${batchId}`,
    /** Held by the one submission that is enqueueing the batch's rows. */
    submitting: `${space.prefix}:batch-submitting:${accountTag(space, account)}:${batchId}`,
    /**
     * The ids of its jobs the rate gate held while the batch was unsealed (a set): released
     * when it is sealed.
     */
    held: `${space.prefix}:batch-held:${accountTag(space, account)}:${batchId}`,
  };
}

/**
 * An account's unsealed batches (a sorted set of batch ids by creation time): submitted by
 * this release and not sealed yet, where the sweep of abandoned submissions looks.
 */
export function unsealedBatchesKey(space: Keyspace, account: string): string {
  return `${space.prefix}:batch-unsealed:${accountTag(space, account)}`;
}

/**
 * The accounts that may have unsealed batches (a set): listed after a batch is begun, unlisted
 * by the sweep once the account has none, so that the sweep reads only theirs.
 */
export function unsealedAccountsKey(prefix: string): string {
  return `${prefix}:batch-unsealed-accounts`;
}

/** An account's batches, newest last: a sorted set of batch ids by creation time (ms). */
export function batchIndexKey(space: Keyspace, account: string): string {
  return `${space.prefix}:batch-index:${accountTag(space, account)}`;
}

/**
 * Set once an account's batch index holds the batches written before there was an index (they
 * are found by SCAN, once).
 */
export function batchIndexBuiltKey(space: Keyspace, account: string): string {
  return `${space.prefix}:batch-index-built:${accountTag(space, account)}`;
}

/** The SCAN pattern of an account's batch metas. */
export function batchMetaPattern(space: Keyspace, account: string): string {
  return `${space.prefix}:batch:${accountTag(space, account)}:*`;
}

/** An account's batch references: reference → the batch that holds it. */
export function batchReferencesKey(space: Keyspace, account: string): string {
  return `${space.prefix}:refs:${accountTag(space, account)}`;
}

/**
 * The keys of a batch stored before batches belonged to their account: meta at
 * `<prefix>:batch:<id>`, rows at `<prefix>:batch:<id>:rows`; `namespace` is the stem both share
 * with every newer batch meta key.
 */
export const legacyBatchKeys = {
  namespace: (prefix: string): string => `${prefix}:batch:`,
  meta: (prefix: string, batchId: string): string => `${prefix}:batch:${batchId}`,
  rows: (prefix: string, batchId: string): string => `${prefix}:batch:${batchId}:rows`,
};

/** The keys of an account's rate gate. */
export function rateKeys(space: Keyspace, account: string) {
  const rate = `${space.prefix}:rate:${accountTag(space, account)}`;
  return {
    /** The next free slot's time (GCRA's theoretical arrival time). */
    slot: rate,
    /** Lane state (hash: run, bulkBy). */
    lanes: `${rate}:lanes`,
    /** Set while the account is paused by a 429's Retry-After. */
    pause: `${rate}:pause`,
    /** Stands in for the queue's lanes when a reservation names no queue. */
    noQueue: `${rate}:no-queue`,
    /** How many lookups and urgent jobs handed their job back to let bulk through. */
    yielded: `${rate}:yielded`,
    /** Bulk slots reserved ahead and not cleared yet (zset). */
    bulkAhead: `${rate}:bulk-ahead`,
  };
}

/**
 * An account's outflow safety (docs/safety.md): its currencies' lane holds (hash: currency ->
 * `insufficient_funds|untilMs`, `velocity:<currency>` -> until when a velocity hold lasts), the
 * jobs they hold (zset of `cause|currency|jobId` by time), the jobs an operator's release lets
 * past the velocity limits once (set), and the audit trail of releases, resumes and cancels
 * (stream).
 */
export function outflowKeys(space: Keyspace, account: string) {
  const base = `${space.prefix}:outflow:${accountTag(space, account)}`;
  return {
    laneHolds: `${base}:lane-holds`,
    held: `${base}:held`,
    passes: `${base}:passes`,
    audit: `${base}:audit`,
  };
}

/**
 * A velocity limit's log (zset of `jobId:units` by time) and totals (hash: n, u) for one
 * currency and rolling window, or one beneficiary's (a hash of its identity, never the data).
 */
export function velocityKeys(
  space: Keyspace,
  account: string,
  currency: string,
  windowMs: number,
  beneficiary?: string,
) {
  const scope = beneficiary === undefined ? "" : `:b:${beneficiary}`;
  const log = `${space.prefix}:velocity:${accountTag(space, account)}:${currency}:${windowMs}${scope}`;
  return { log, totals: `${log}:totals` };
}

/** Set while an operator (or a refused key) holds the account paused: why and since when. */
export function accountPauseKey(space: Keyspace, account: string): string {
  return `${space.prefix}:paused:${accountTag(space, account)}`;
}

/** Held by the one replay of a dead letter under way. */
export function replayLockKey(space: Keyspace, account: string, jobId: string): string {
  return `${space.prefix}:replaying:${accountTag(space, account)}:${jobId}`;
}

/** Held by the one process moving an account's jobs enqueued before lanes into their lane. */
export function lanePassKey(space: Keyspace, account: string): string {
  return `${space.prefix}:lane-pass:${accountTag(space, account)}`;
}

/** The pub/sub channel on which producers tell workers that urgent jobs wait (not a key). */
export function laneWakeChannel(prefix: string): string {
  return `${prefix}:lane-wake`;
}

/**
 * Which accounts have work, and which are being served (src/processors/account-turns.ts): two
 * sorted sets of account aliases, `due` scored by when the account's work is due (ms) and
 * `held` by when its holder's lease ends (ms), and the set `rung` of accounts rung for while
 * held (due again when their turn ends). One hash tag, so one script reads them all on a
 * cluster.
 */
export function turnKeys(prefix: string): {
  readonly due: string;
  readonly held: string;
  readonly rung: string;
} {
  return {
    due: `${prefix}:{turns}:due`,
    held: `${prefix}:{turns}:held`,
    rung: `${prefix}:{turns}:rung`,
  };
}

/** The pub/sub channel on which a ring tells worker processes to look for turns now (not a key). */
export function turnWakeChannel(prefix: string): string {
  return `${prefix}:turn-wake`;
}

/**
 * The webhook endpoint's state, a hash: `goneAt` (ms) and `url` (a digest of the URL that
 * answered 410 Gone) while deliveries are stopped; absent otherwise.
 */
export function webhookEndpointKey(prefix: string): string {
  return `${prefix}:webhook-endpoint`;
}

/**
 * What readiness writes to learn that Redis takes writes (a short-lived string): one key on a
 * single Redis; on a cluster one per account, in the account's slot, so that every master the
 * accounts' work goes to is tried.
 */
export function readyCheckKeys(space: Keyspace, accounts: readonly string[]): string[] {
  if (!space.cluster) return [`${space.prefix}:ready-check`];
  return accounts.map((account) => `${space.prefix}:ready-check:${accountTag(space, account)}`);
}

/** The SCAN pattern of every key under `prefix`. */
export function everyKeyPattern(prefix: string): string {
  return `${prefix}:*`;
}

/**
 * The field of a job's hash that records "sent" for a kind without an idempotency key: part of
 * the job, it lives exactly as long as the job (no TTL that could end while the job runs).
 */
export const SENT_FIELD = "moneyqSent";

/**
 * What holds or ended a job enqueued alone, as a batch's meta does for its rows: awaiting
 * approval, scheduled, or cancelled (hash, TTL). The rate gate reads it before the job's
 * request leaves.
 */
export function jobHoldKey(space: Keyspace, account: string, jobId: string): string {
  return `${space.prefix}:job-hold:${accountTag(space, account)}:${jobId}`;
}

/**
 * An account's re-checks of succeeded payouts, by when each is due (ms): each member the JSON
 * of what the next lookup needs (docs/reconciliation.md).
 */
export function recheckKey(space: Keyspace, account: string): string {
  return `${space.prefix}:recheck:${accountTag(space, account)}`;
}

/** A job's recorded reversal (its JSON): set once, so a reversal is recorded once. */
export function reversalKey(space: Keyspace, account: string, jobId: string): string {
  return `${space.prefix}:reversed:${accountTag(space, account)}:${jobId}`;
}

/** A job's resolution (its JSON): set once, so a job is resolved once. */
export function resolutionKey(space: Keyspace, account: string, jobId: string): string {
  return `${space.prefix}:resolved:${accountTag(space, account)}:${jobId}`;
}

/** An account's audit trail of resolutions, automatic and by hand (a stream). */
export function resolutionTrailKey(space: Keyspace, account: string): string {
  return `${space.prefix}:resolutions:${accountTag(space, account)}`;
}

/**
 * The job a provider's id belongs to, with the money its request asked for (JSON `{j, c, a}`),
 * kept twice as long as results: how the reconciliation sweep matches a provider's record.
 */
export function upstreamIdKey(space: Keyspace, account: string, upstreamId: string): string {
  return `${space.prefix}:upstream:${accountTag(space, account)}:${upstreamId}`;
}

/** An account's succeeded jobs by when they succeeded (ms), kept as long as results. */
export function successesKey(space: Keyspace, account: string): string {
  return `${space.prefix}:successes:${accountTag(space, account)}`;
}

/**
 * The reconciliation sweep of an account (docs/reconciliation.md): `lock`, the one process
 * sweeping it (a lease); `cursor`, where the sweep under way stands (a hash, so a stopped one
 * resumes); `found` and `seen`, the drift items it found and the provider's ids it read (sets,
 * cleared when a sweep begins); `drift`, every drift item ever found, by its id (a hash: found
 * once, reported as often as it is found); `summary`, the last finished sweep's counts (a hash).
 */
export function sweepKeys(space: Keyspace, account: string) {
  const tag = accountTag(space, account);
  const base = `${space.prefix}:sweep`;
  return {
    lock: `${base}-lock:${tag}`,
    cursor: `${base}-cursor:${tag}`,
    found: `${base}-found:${tag}`,
    seen: `${base}-seen:${tag}`,
    drift: `${space.prefix}:drift:${tag}`,
    summary: `${base}-summary:${tag}`,
  };
}

/** A resolution by hand waiting for a second person's approval (JSON), with a TTL. */
export function resolutionRequestKey(space: Keyspace, account: string, jobId: string): string {
  return `${space.prefix}:resolution-request:${accountTag(space, account)}:${jobId}`;
}

/**
 * The payments of an account with one payment fingerprint (its digest: no beneficiary data in
 * the key) enqueued within the account's repeat window (docs/safety.md): `records`, a hash of
 * job id → where it came from and whether it was paid; `times`, its job ids by when each was
 * enqueued (ms), so that the ones past the window and those over the cap leave cheaply. Both
 * expire a window after the newest.
 */
export function paymentRepeatKeys(space: Keyspace, account: string, digest: string) {
  const base = `${space.prefix}:repeat:${accountTag(space, account)}:${digest}`;
  return { records: base, times: `${base}:t` };
}
