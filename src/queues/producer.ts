import type { Job, JobsOptions } from "bullmq";
import type { ApprovalPolicy, PaymentRepeatsPolicy } from "../config/load-config.js";
import { type FieldIssue, validate } from "../contract/field-issues.js";
import { DEFAULT_PROVIDER_PROFILE, type ProviderProfile } from "../provider/profile.js";
import { profileRequestIssues } from "../provider/requests.js";
import { bullKeys, JOB_FIELDS, jobKeyOf, lockKeyOf } from "../redis/bullmq-internals.js";
import type { RedisConnection } from "../redis/connection.js";
import { type Keyspace, laneWakeChannel, resultMarkerKey, SENT_FIELD } from "../redis/keys.js";
import { redisContext } from "../redis/redis-context.js";
import type { ReplicaWaits } from "../redis/replica-waits.js";
import { slotGroups } from "../redis/slot-groups.js";
import { type JobTracer, NO_TRACING } from "../tracing/job-tracer.js";
import { AccountQueues } from "./account-queues.js";
import {
  EnqueueValidationError,
  IdempotencyKeyReusedError,
  PaymentRepeatedError,
} from "./enqueue-error.js";
import { deriveIdempotencyKey, jobIdFor } from "./idempotency-key.js";
import { type JobData, type JobState, mayHaveBeenSent } from "./job-data.js";
import { type JobEnvelope, JobEnvelopeSchema, type JobInput } from "./job-envelope.js";
import { type JobHold, jobHoldOf, notBeforeRule } from "./job-holds.js";
import { JOB_KINDS } from "./job-kinds.js";
import { type JobPriority, LANE_PRIORITY, laneWakeMessage } from "./lanes.js";
import { paymentFingerprint } from "./payment-fingerprint.js";
import { type PaymentMatch, PaymentRepeats } from "./payment-repeats.js";
import { accountQueueName } from "./queue-names.js";
import { repeatRule } from "./repeat-rule.js";
import {
  type FingerprintEntry,
  type KeyClaim,
  type KeyUse,
  RequestFingerprints,
  requestFingerprint,
} from "./request-fingerprint.js";

export interface ProducerOptions {
  /** A connection with `maxRetriesPerRequest: null` (see createRedis). The caller closes it. */
  readonly connection: RedisConnection;
  /** Redis key prefix (config.redisPrefix). */
  readonly prefix: string;
  /** Aliases of the configured accounts; a job for another alias is refused. */
  readonly accounts: readonly string[];
  /** Submissions per job before its outcome is looked up (config.pipeline.maxAttempts). */
  readonly maxAttempts: number;
  /** How long finished jobs are kept (config.pipeline.retentionMs). */
  readonly retentionMs: number;
  /** Says which body fields the provider requires where the spec does not (config.provider). */
  readonly profile?: ProviderProfile;
  /** The process's account queues, shared and closed by their owner; else the producer opens its own. */
  readonly queues?: AccountQueues;
  /**
   * Each account's approval policy (config.approvals): a job enqueued alone over its
   * `jobsOver` amount waits for approval. Left out, no job does.
   */
  readonly approvals?: ReadonlyMap<string, ApprovalPolicy>;
  /** Traces each job from its enqueue (src/tracing); NO_TRACING when left out. */
  readonly tracer?: JobTracer;
  /**
   * Each account's policy on repeated payments (config.paymentRepeats): a job enqueued alone
   * that repeats a payment of the window is reported, held for approval or refused. Left out,
   * every account has the default (reported, 7 days).
   */
  readonly paymentRepeats?: ReadonlyMap<string, PaymentRepeatsPolicy>;
}

export interface EnqueuedJob {
  readonly jobId: string;
  readonly account: string;
  readonly idempotencyKey: string;
  /**
   * A job enqueued alone whose payment repeats others of the window under other keys: those
   * payments, newest first (docs/safety.md); absent when it repeats none.
   */
  readonly repeats?: readonly PaymentMatch[];
}

/** A job enqueued by `enqueueKeyed`, and whether its key already held this same request. */
export interface KeyedJob {
  readonly job: EnqueuedJob;
  readonly replayed: boolean;
}

/** How jobs are added: after a delay, by whom, and whether one job alone (its own trace's part). */
interface AddOptions {
  readonly delayMs?: number;
  readonly submittedBy?: string | undefined;
  /** A job enqueued by itself continues its caller's trace; jobs added together start their own. */
  readonly alone?: boolean;
  /** Payments the job repeats, under a `hold` policy: it waits for approval, naming them. */
  readonly repeatsHeld?: readonly PaymentMatch[];
}

/** Jobs of enqueueMany go to Redis in chunks of this many. */
export const ENQUEUE_CHUNK = 500;

/** What withdrawing a cancelled job did (Producer.withdraw). */
export type Withdrawal = "removed" | "removed_maybe_sent" | "in_flight" | "sent";

/** The state kept in a job's data; "unreadable" if the data is not what moneyq writes. */
function stateOf(data: string): JobState | undefined | "unreadable" {
  try {
    const parsed = JSON.parse(data) as Partial<JobData> | null;
    return parsed?.state;
  } catch {
    return "unreadable";
  }
}

/**
 * Enqueues payout, funding and exchange jobs. Each job's key is the caller's or derived from
 * account, batch id and reference; the job id derives from the key, so enqueueing the same
 * work twice is a no-op that returns the same job.
 */
export class Producer {
  readonly #options: ProducerOptions;
  readonly #queues: AccountQueues;
  /** True when the queues are the producer's own, so its close closes them. */
  readonly #ownsQueues: boolean;
  readonly #fingerprints: RequestFingerprints;
  readonly #tracer: JobTracer;
  readonly #space: Keyspace;
  readonly #replicas: ReplicaWaits;
  /** Payments by payment fingerprint: recorded at enqueue, read for repeats. */
  readonly repeats: PaymentRepeats;

  constructor(options: ProducerOptions) {
    this.#options = options;
    const context = redisContext(options.connection, options.prefix);
    this.#space = context.space;
    this.#tracer = options.tracer ?? NO_TRACING;
    this.#replicas = context.replicas;
    this.#ownsQueues = options.queues === undefined;
    this.#queues = options.queues ?? new AccountQueues(options.connection, options.prefix);
    this.repeats = new PaymentRepeats(options.connection, options.prefix, options.paymentRepeats);
    this.#fingerprints = new RequestFingerprints(
      options.connection,
      options.prefix,
      2 * options.retentionMs,
    );
  }

  /**
   * Validates and enqueues one job, urgent unless its `priority` says bulk; throws
   * EnqueueValidationError naming every bad field, and IdempotencyKeyReusedError when its key
   * already holds a different request.
   */
  async enqueue(input: JobInput): Promise<EnqueuedJob> {
    return (await this.enqueueKeyed(input)).job;
  }

  /**
   * `enqueue`, also saying whether the key already held this same request (a replay).
   * `submittedBy` names who enqueues it: the one who may not approve it.
   */
  async enqueueKeyed(input: JobInput, submittedBy?: string): Promise<KeyedJob> {
    const envelope = this.envelopeOf(input);
    const repeats = await this.#repeatsOf(envelope);
    const { policy } = this.repeats.policyOf(envelope.account);
    if (repeats.length > 0 && policy === "refuse")
      throw new PaymentRepeatedError(
        repeats,
        repeatRule(repeats, policy, this.repeats.windowText(envelope.account)),
      );
    const { jobs, uses } = await this.#enqueue([envelope], true, "urgent", {
      submittedBy,
      alone: true,
      ...(policy === "hold" && repeats.length > 0 && { repeatsHeld: repeats }),
    });
    const job = jobs[0] as EnqueuedJob;
    return {
      job: repeats.length > 0 ? { ...job, repeats } : job,
      replayed: uses[0] === "replayed",
    };
  }

  /**
   * The payments of the window that a job enqueued alone repeats under other keys; none for a
   * replay (its key holds this same request already): that job was judged when it was enqueued.
   */
  async #repeatsOf(envelope: JobEnvelope): Promise<PaymentMatch[]> {
    const digest = paymentFingerprint(envelope.kind, envelope.request);
    if (digest === undefined) return [];
    const jobId = jobIdFor(envelope.account, envelope.idempotencyKey);
    const [matches] = await this.repeats.find(envelope.account, [{ digest, jobId }]);
    if (matches === undefined || matches.length === 0) return [];
    const [use] = await this.keyUses([envelope]);
    return use === "same" ? [] : matches;
  }

  /**
   * Validates every job first, then enqueues them all in chunks; nothing is enqueued if one is
   * bad. Many jobs at once are bulk, unless a job's `priority` says urgent.
   */
  async enqueueMany(inputs: readonly JobInput[]): Promise<EnqueuedJob[]> {
    return this.enqueueEnvelopes(inputs.map((input, index) => this.envelopeOf(input, index)));
  }

  /**
   * Enqueues envelopes that `envelopeOf` returned (batches validate every row before anything
   * is enqueued, and do not validate twice). Each envelope's job id derives from its key. A job
   * goes in the lane its `priority` names, else in `lane` (docs/pipeline.md, "Lanes").
   * Nothing is enqueued if one key holds another request.
   */
  async enqueueEnvelopes(
    envelopes: readonly JobEnvelope[],
    lane: JobPriority = "bulk",
  ): Promise<EnqueuedJob[]> {
    return (await this.#enqueue(envelopes, true, lane, {})).jobs;
  }

  /**
   * Enqueues the envelopes whose key is new or holds this same request; the others (their key
   * holds another request) are left out and their indices answered. For a batch's rows, where
   * such a row becomes a row issue while the others go on.
   */
  async enqueueUnlessReused(
    envelopes: readonly JobEnvelope[],
    lane: JobPriority = "bulk",
    delayMs = 0,
  ): Promise<{ jobs: EnqueuedJob[]; reused: number[] }> {
    const { jobs, uses } = await this.#enqueue(envelopes, false, lane, { delayMs });
    const reused = uses.flatMap((u, i) => (u === "different" ? [i] : []));
    return { jobs, reused };
  }

  /** Which of the account's job ids' keys hold a fingerprint (one MGET): only those can be taken. */
  async fingerprinted(account: string, jobIds: readonly string[]): Promise<boolean[]> {
    return this.#fingerprints.held(account, jobIds);
  }

  /**
   * Whether each envelope's key is new, holds this same request, or holds a different one.
   * Reads only; batches ask before they write anything.
   */
  async keyUses(envelopes: readonly JobEnvelope[]): Promise<KeyUse[]> {
    return this.#fingerprints.check(envelopes.map((e) => this.#entry(e)));
  }

  /**
   * Claims every key first, chunk by chunk, then adds the jobs: `refuse`, a key that holds
   * another request gives back every claim and throws before any job is added; otherwise
   * those envelopes are left out. A failed add gives the claims back too, so a retry is
   * judged against the jobs that exist.
   */
  async #enqueue(
    envelopes: readonly JobEnvelope[],
    refuse: boolean,
    lane: JobPriority,
    adding: AddOptions,
  ): Promise<{ jobs: EnqueuedJob[]; uses: KeyClaim[] }> {
    const entries = envelopes.map((e) => this.#entry(e));
    // One job (enqueue) has no index in its errors; several (enqueueMany, batches) do.
    const offset = (i: number) => (envelopes.length > 1 ? i : undefined);
    const uses: KeyClaim[] = [];
    const fresh: FingerprintEntry[] = [];
    try {
      for (let i = 0; i < envelopes.length; i += ENQUEUE_CHUNK) {
        const claimed = await this.#fingerprints.claim(entries.slice(i, i + ENQUEUE_CHUNK), refuse);
        uses.push(...claimed.uses);
        fresh.push(...claimed.fresh);
        if (refuse)
          this.#refuseReused(envelopes.slice(i, i + ENQUEUE_CHUNK), claimed.uses, offset(i));
      }
      // A replayed key's job exists, or it has its result: adding it again could run it twice.
      await this.#add(
        envelopes.filter((_, i) => uses[i] === "new" || uses[i] === "pending"),
        lane,
        adding,
      );
    } catch (error) {
      await this.#fingerprints.release(fresh).catch(() => undefined);
      throw error;
    }
    // The claims stay: enqueued again under the same keys, the jobs are found, not added twice.
    await this.#replicated(envelopes);
    const jobs = envelopes.flatMap((e, i) =>
      uses[i] === "different"
        ? []
        : [
            {
              jobId: entries[i]?.jobId as string,
              account: e.account,
              idempotencyKey: e.idempotencyKey,
            },
          ],
    );
    return { jobs, uses };
  }

  /**
   * Resolves once each account's claims and jobs are on its replicas (ReplicaWaits), so that a
   * producer told "enqueued" may forget its copy; NotReplicatedError otherwise.
   */
  async #replicated(envelopes: readonly JobEnvelope[]): Promise<void> {
    const accounts = new Set(envelopes.map((e) => e.account));
    await Promise.all([...accounts].map((a) => this.#replicas.ensure(a)));
  }

  /** Adds the jobs, a chunk and an account per addBulk, each in its enqueue span. */
  async #add(
    envelopes: readonly JobEnvelope[],
    lane: JobPriority,
    adding: AddOptions,
  ): Promise<void> {
    const { delayMs = 0, submittedBy, alone = false } = adding;
    const holds = await this.#writeHolds(envelopes, submittedBy, adding.repeatsHeld);
    for (let i = 0; i < envelopes.length; i += ENQUEUE_CHUNK) {
      const byAccount = new Map<string, JobEnvelope[]>();
      for (const e of envelopes.slice(i, i + ENQUEUE_CHUNK)) {
        const list = byAccount.get(e.account);
        if (list) list.push(e);
        else byAccount.set(e.account, [e]);
      }
      for (const [account, list] of byAccount) {
        const options = list.map((e) =>
          this.#jobOptions(e, lane, holds.get(e)?.delayMs ?? delayMs),
        );
        const facts = list.map((e, index) => ({
          jobId: options[index]?.jobId,
          kind: e.kind,
          account: e.account,
          attempt: 0,
        }));
        await this.#tracer.enqueue(facts, alone, (traceOf) =>
          this.#queues.get(account).addBulk(
            list.map((envelope, index) => ({
              name: envelope.kind,
              // The effective lane is kept in the envelope, so a replay can restore it.
              data: { envelope: { ...envelope, priority: envelope.priority ?? lane } },
              opts: { ...options[index], ...traceOf(index) },
            })),
          ),
        );
        await this.repeats.record(list);
        await this.#queues.due.ring(
          account,
          Date.now() + Math.min(...options.map((o) => o.delay ?? 0)),
        );
        if (delayMs === 0 && holds.size === 0)
          await this.#wakeFor(
            account,
            list.filter((e) => (e.priority ?? lane) === "urgent").length,
          );
      }
    }
  }

  /**
   * Tells the account's workers that urgent jobs wait, so one held by bulk jobs makes room at
   * once. Only a shortcut: the jobs are added, and a worker finds them within a slot interval
   * without it, so a failure here fails nothing.
   */
  async #wakeFor(account: string, urgent: number): Promise<void> {
    if (urgent === 0) return;
    await this.#options.connection
      .publish(laneWakeChannel(this.#options.prefix), laneWakeMessage(account, urgent))
      .catch(() => undefined);
  }

  /** Throws for the first key that holds another request; `offset`: the chunk's start, if any. */
  #refuseReused(
    envelopes: readonly JobEnvelope[],
    uses: readonly KeyClaim[],
    offset: number | undefined,
  ): void {
    const at = uses.indexOf("different");
    if (at < 0) return;
    const e = envelopes[at] as JobEnvelope;
    const jobId = jobIdFor(e.account, e.idempotencyKey);
    throw new IdempotencyKeyReusedError(
      jobId,
      e.idempotencyKey,
      offset === undefined ? undefined : offset + at,
    );
  }

  /** What the fingerprint store needs of an envelope: its job id, job hash, result marker. */
  #entry(envelope: JobEnvelope): FingerprintEntry {
    const space = this.#space;
    const jobId = jobIdFor(envelope.account, envelope.idempotencyKey);
    const queue = bullKeys.queue(space.prefix, accountQueueName(space, envelope.account));
    return {
      account: envelope.account,
      jobId,
      jobKey: bullKeys.job(queue, jobId),
      markerKey: resultMarkerKey(space, envelope.account, jobId),
      fingerprint: requestFingerprint(envelope),
    };
  }

  /** The job id `input` gets when enqueued (validates it first). */
  jobIdOf(input: JobInput): string {
    const envelope = this.envelopeOf(input);
    return jobIdFor(envelope.account, envelope.idempotencyKey);
  }

  /** The validated envelope of `input`, with its key; throws EnqueueValidationError. */
  envelopeOf(input: JobInput, index?: number): JobEnvelope {
    const issues: FieldIssue[] = [];
    let idempotencyKey = input.idempotencyKey;
    if (idempotencyKey === undefined) {
      if (
        input.batchId !== undefined &&
        input.reference !== undefined &&
        typeof input.account === "string"
      ) {
        idempotencyKey = deriveIdempotencyKey(input.account, input.batchId, input.reference);
      } else {
        issues.push({
          field: "idempotencyKey",
          rule: "required unless batchId and reference are given",
        });
      }
    }
    const parsed = validate(JobEnvelopeSchema, { ...input, idempotencyKey: idempotencyKey ?? "x" });
    if (!parsed.success) issues.push(...parsed.issues);
    else {
      const scheduleRule = notBeforeRule(parsed.data as JobEnvelope, Date.now());
      if (scheduleRule !== undefined) issues.push({ field: "notBefore", rule: scheduleRule });
      const { kind, request } = parsed.data as JobEnvelope;
      const profile = this.#options.profile ?? DEFAULT_PROVIDER_PROFILE;
      for (const i of profileRequestIssues(
        profile,
        JOB_KINDS[kind].operation,
        (request as { body?: unknown }).body,
      ))
        issues.push({ field: `request.body.${i.field}`, rule: i.rule });
    }
    if (
      typeof input.account === "string" &&
      !this.#options.accounts.includes(input.account) &&
      parsed.success
    ) {
      issues.push({
        field: "account",
        rule: `no account is configured with alias "${input.account}"`,
      });
    }
    if (issues.length > 0 || !parsed.success) throw new EnqueueValidationError(issues, index);
    return parsed.data as JobEnvelope;
  }

  /** Removes a job no worker holds (BullMQ refuses one that is locked); true if removed. */
  async remove(account: string, jobId: string): Promise<boolean> {
    return (await this.#queues.get(account).remove(jobId)) === 1;
  }

  /**
   * Takes a cancelled job out of its queue. Call it once the job's hold (or its batch) says
   * cancelled: from then on the gate lets no request of it leave while it submits, so a job
   * found unlocked and submitting cannot be sent before it is removed. `removed`: it never ran a
   * request that may have left; `removed_maybe_sent`: an earlier attempt may have (its result
   * must not say "never sent"); `in_flight`: a worker holds it (it ends as its gate answers) or
   * it has gone; `sent`: its request left and it is confirming, so it stays to be confirmed.
   */
  async withdraw(account: string, jobId: string): Promise<Withdrawal> {
    const queue = this.#queues.get(account);
    const job = { queueQualifiedName: queue.qualifiedName, id: jobId };
    const answers = await this.#options.connection
      .multi()
      .exists(lockKeyOf(job))
      .hmget(
        jobKeyOf(job),
        JOB_FIELDS.data,
        JOB_FIELDS.attemptsMade,
        JOB_FIELDS.stalledCounter,
        SENT_FIELD,
      )
      .exec();
    const failed = answers?.find(([error]) => error !== null)?.[0];
    if (answers === null || failed) throw failed ?? new Error(`job ${jobId}: its read was aborted`);
    const locked = answers[0]?.[1] === 1;
    const fields = (answers[1]?.[1] ?? []) as (string | null)[];
    const [data, attemptsMade, stalledCounter, sentMark] = fields;
    if (locked || data == null) return "in_flight";
    const state = stateOf(data);
    if (state !== undefined && state !== "unreadable" && state.phase !== "submit") return "sent";
    if (!(await this.remove(account, jobId))) return "in_flight";
    const runs = {
      attemptsMade: Number(attemptsMade ?? 0),
      stalledCounter: Number(stalledCounter ?? 0),
    };
    return state === "unreadable" || mayHaveBeenSent(runs, state, sentMark !== null)
      ? "removed_maybe_sent"
      : "removed";
  }

  /**
   * Moves a delayed job to run in `delayMs` (0: now); false when the job is not delayed (a
   * worker holds it, or it has ended). `unlessRun`: false, and nothing moved, for a job whose
   * request may have left already (it waits in the delayed set for its confirmation or its
   * retry, which a move would cut short).
   */
  async release(
    account: string,
    jobId: string,
    delayMs: number,
    options: { readonly unlessRun?: boolean } = {},
  ): Promise<boolean> {
    const job = await this.#queues.get(account).getJob(jobId);
    if (job === undefined) return false;
    if (options.unlessRun && mayHaveBeenSent(job, job.data?.state)) return false;
    const moved = await runFromDelayed(job, delayMs);
    if (moved) await this.#queues.due.ring(account, Date.now() + delayMs);
    return moved;
  }

  /** Closes the queues this producer opened (not the connection, nor shared queues). Safe to call twice. */
  async close(): Promise<void> {
    if (this.#ownsQueues) await this.#queues.close();
  }

  /**
   * Writes the hold of each job enqueued alone that something holds (its `notBefore`, or its
   * approval), before the job exists: the gate reads it whenever the job comes up.
   */
  async #writeHolds(
    envelopes: readonly JobEnvelope[],
    submittedBy: string | undefined,
    repeatsHeld: readonly PaymentMatch[] | undefined,
  ): Promise<Map<JobEnvelope, JobHold>> {
    const holds = new Map<JobEnvelope, JobHold>();
    const now = Date.now();
    for (const envelope of envelopes) {
      // A batch's jobs are held by their batch: nothing to work out per row.
      if (envelope.batchId !== undefined) continue;
      const jobId = jobIdFor(envelope.account, envelope.idempotencyKey);
      const hold = jobHoldOf(this.#space, envelope, jobId, {
        policy: this.#options.approvals?.get(envelope.account),
        submittedBy,
        now,
        repeats: repeatsHeld,
      });
      if (hold) holds.set(envelope, hold);
    }
    if (holds.size === 0) return holds;
    const held = [...holds];
    await Promise.all(
      slotGroups(this.#space, held, ([envelope]) => envelope.account).map(async ({ items }) => {
        const multi = this.#options.connection.multi();
        for (const [, hold] of items)
          multi
            .hset(hold.key, hold.fields)
            .pexpire(hold.key, hold.delayMs + this.#options.retentionMs);
        await multi.exec();
      }),
    );
    return holds;
  }

  #jobOptions(envelope: JobEnvelope, lane: JobPriority, delayMs = 0): JobsOptions {
    const retentionSeconds = Math.ceil(this.#options.retentionMs / 1000);
    return {
      ...(delayMs > 0 && { delay: delayMs }),
      jobId: jobIdFor(envelope.account, envelope.idempotencyKey),
      priority: LANE_PRIORITY[envelope.priority ?? lane],
      attempts: this.#options.maxAttempts,
      backoff: { type: "moneyq" },
      removeOnComplete: { age: retentionSeconds },
      removeOnFail: { age: retentionSeconds },
    };
  }
}

/**
 * Moves a delayed job to run in `delayMs` (or at once); false when it is not delayed (any
 * more): BullMQ refuses it, and the move is not ours to make (another release moved it first,
 * or it ended).
 */
export async function runFromDelayed(job: Job, delayMs: number): Promise<boolean> {
  try {
    if (delayMs > 0) await job.changeDelay(delayMs);
    else await job.promote();
    return true;
  } catch (error) {
    if (/not in the delayed state|Missing key for job/.test(String(error))) return false;
    throw error;
  }
}
