/**
 * Every Redis key moneyq reads or writes, spelled here and nowhere else. `prefix` is
 * config.redisPrefix. An account alias and a batch id have no ':', and each kind of key has its
 * own namespace, so no alias or id can reach another's keys. BullMQ's own keys (a queue's job
 * hashes, locks and lanes) are spelled here too, as BullMQ names them, for the scripts that
 * check them.
 */

/** The results stream: every terminal result, in order. */
export function resultsStreamKey(prefix: string): string {
  return `${prefix}:results`;
}

/** A job's result marker: its terminal result, set once. */
export function resultMarkerKey(prefix: string, account: string, jobId: string): string {
  return `${prefix}:result:${account}:${jobId}`;
}

/** An account's reconciliation backlog: ids of its jobs whose last result is needs_reconciliation. */
export function backlogKey(prefix: string, account: string): string {
  return `${prefix}:needs-reconciliation:${account}`;
}

/** The fingerprint of the request stored under a job id (its account and idempotency key). */
export function fingerprintKey(prefix: string, account: string, jobId: string): string {
  return `${prefix}:fp:${account}:${jobId}`;
}

/**
 * Keys of a job that earlier releases spelled without its account. Result markers and
 * fingerprints are still read there (never written) until they expire, at most twice
 * MONEYQ_RETENTION_MS after the upgrade; account pauses are moved at start.
 */
export const legacyJobKeys = {
  resultMarker: (prefix: string, jobId: string): string => `${prefix}:result:${jobId}`,
  fingerprint: (prefix: string, jobId: string): string => `${prefix}:fp:${jobId}`,
  /** Hash: account → why and when it was paused. */
  pausedAccounts: (prefix: string): string => `${prefix}:paused-accounts`,
};

/**
 * The Redis keys of one batch. They belong to its account: the same id in two accounts is two
 * batches.
 */
export function batchKeys(prefix: string, account: string, batchId: string) {
  return {
    meta: `${prefix}:batch:${account}:${batchId}`,
    rows: `${prefix}:batch-rows:${account}:${batchId}`,
    /** Held by the one submission that is enqueueing the batch's rows. */
    submitting: `${prefix}:batch-submitting:${account}:${batchId}`,
  };
}

/** An account's batches, newest last: a sorted set of batch ids by creation time (ms). */
export function batchIndexKey(prefix: string, account: string): string {
  return `${prefix}:batch-index:${account}`;
}

/**
 * Set once an account's batch index holds the batches written before there was an index (they
 * are found by SCAN, once).
 */
export function batchIndexBuiltKey(prefix: string, account: string): string {
  return `${prefix}:batch-index-built:${account}`;
}

/** The SCAN pattern of an account's batch metas. */
export function batchMetaPattern(prefix: string, account: string): string {
  return `${prefix}:batch:${account}:*`;
}

/** An account's batch references: reference → the batch that holds it. */
export function batchReferencesKey(prefix: string, account: string): string {
  return `${prefix}:refs:${account}`;
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
export function rateKeys(prefix: string, account: string) {
  const rate = `${prefix}:rate:${account}`;
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

/** Set while an operator (or a refused key) holds the account paused: why and since when. */
export function accountPauseKey(prefix: string, account: string): string {
  return `${prefix}:paused:${account}`;
}

/** Held by the one replay of a dead letter under way. */
export function replayLockKey(prefix: string, account: string, jobId: string): string {
  return `${prefix}:replaying:${account}:${jobId}`;
}

/** Held by the one process moving an account's jobs enqueued before lanes into their lane. */
export function lanePassKey(prefix: string, account: string): string {
  return `${prefix}:lane-pass:${account}`;
}

/** The pub/sub channel on which producers tell workers that urgent jobs wait (not a key). */
export function laneWakeChannel(prefix: string): string {
  return `${prefix}:lane-wake`;
}

/**
 * The webhook endpoint's state, a hash: `goneAt` (ms) and `url` (a digest of the URL that
 * answered 410 Gone) while deliveries are stopped; absent otherwise.
 */
export function webhookEndpointKey(prefix: string): string {
  return `${prefix}:webhook-endpoint`;
}

/** The SCAN pattern of every key under `prefix`. */
export function everyKeyPattern(prefix: string): string {
  return `${prefix}:*`;
}

/** BullMQ's keys, as BullMQ names them: `queueKey` is a queue's qualified name (`<prefix>:<queue>`). */
export const bullKeys = {
  queue: (prefix: string, queueName: string): string => `${prefix}:${queueName}`,
  /** A job's hash. */
  job: (queueKey: string, jobId: string): string => `${queueKey}:${jobId}`,
  /** A job's lock, held by the worker processing it. */
  lock: (queueKey: string, jobId: string): string => `${queueKey}:${jobId}:lock`,
  /** The queue's prioritized jobs (zset), where the lanes are. */
  prioritized: (queueKey: string): string => `${queueKey}:prioritized`,
  /** The queue's active jobs (list). */
  active: (queueKey: string): string => `${queueKey}:active`,
};

/** What names a job's keys: BullMQ's Job has both. */
interface JobAddress {
  readonly queueQualifiedName: string;
  readonly id?: string | undefined;
}

/** The Redis key of a job's lock, as BullMQ names it. */
export const lockKeyOf = (job: JobAddress): string =>
  bullKeys.lock(job.queueQualifiedName, String(job.id));

/** The Redis key of a job's hash. */
export const jobKeyOf = (job: JobAddress): string =>
  bullKeys.job(job.queueQualifiedName, String(job.id));

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
export function jobHoldKey(prefix: string, account: string, jobId: string): string {
  return `${prefix}:job-hold:${account}:${jobId}`;
}
