import { createHash } from "node:crypto";
import { type Job, Queue, type Telemetry } from "bullmq";
import { closeOnceReady } from "../queues/close-queue.js";
import type { RedisConnection } from "../redis/connection.js";
import { webhookEndpointKey } from "../redis/keys.js";

/** The webhook delivery queue's hash tag on a cluster, where its keys share one slot. */
export const WEBHOOK_TAG = "webhooks";

/**
 * The webhook delivery queue's name: on a cluster it is its own hash tag, so the queue's keys
 * share one slot (the queue is one, for every account: docs/scaling.md).
 */
export function webhookQueueName(cluster: boolean): string {
  return cluster ? `{${WEBHOOK_TAG}}` : WEBHOOK_TAG;
}
/** A delivery job's id: its event's id (the envelope's, or an earlier bare result's stream entry), prefixed. */
export const deliveryJobId = (eventId: string): string => `wh_${eventId}`;
const FAILED_PAGE = 200;

/** What one delivery job carries: the event id and the body exactly as signed. */
export interface Delivery {
  readonly eventId: string;
  readonly body: string;
}

/** A delivery that gave up, as an operator sees it (never its body's details beyond these). */
export interface FailedDelivery {
  readonly eventId: string;
  /** The result's account and job, read from the body; undefined if it cannot be read. */
  readonly account: string | undefined;
  readonly jobId: string | undefined;
  readonly attempts: number;
  readonly failedAt: string | undefined;
  readonly reason: string;
}

export type RedeliverOutcome = "redelivered" | "not_found" | "not_failed";

/** While deliveries are stopped: since when, after the receiver answered 410 Gone. */
export interface EndpointStop {
  readonly goneAt: string;
}

/**
 * What can be done with the webhook delivery queue from any process: the endpoint's stop after
 * a 410 Gone and its resumption, the deliveries that gave up, and sending them again.
 */
export class WebhookDeliveries {
  readonly queue: Queue<Delivery>;
  readonly #connection: RedisConnection;
  readonly #endpointKey: string;
  #closing: Promise<void> | undefined;

  /** `telemetry`: BullMQ's spans of each delivery (src/tracing), when tracing is on. */
  constructor(connection: RedisConnection, prefix: string, telemetry?: Telemetry) {
    this.#connection = connection;
    this.#endpointKey = webhookEndpointKey(prefix);
    this.queue = new Queue<Delivery>(webhookQueueName(connection.isCluster), {
      connection,
      prefix,
      ...(telemetry && { telemetry }),
    });
  }

  /** Stops every delivery (the queue is paused: nothing is lost) until resume(). */
  async stop(url: string, now: number = Date.now()): Promise<void> {
    await this.#connection.hset(this.#endpointKey, "goneAt", String(now), "url", digest(url));
    await this.queue.pause();
    await this.#settle();
  }

  async stopped(): Promise<EndpointStop | undefined> {
    const goneAt = await this.#connection.hget(this.#endpointKey, "goneAt");
    return goneAt === null ? undefined : { goneAt: new Date(Number(goneAt)).toISOString() };
  }

  /** Deliveries go on, the held ones first. */
  async resume(): Promise<void> {
    await this.queue.resume();
    await this.#connection.del(this.#endpointKey);
    await this.#settle();
  }

  /**
   * A stop and a resume can run at once (a 410 while an operator resumes): interleaved, they
   * could leave the queue paused with no stop recorded, stopped in silence. Each ends by making
   * the queue agree with the record as it now stands, so the one that wrote the record last wins.
   */
  async #settle(): Promise<void> {
    const stopped = (await this.#connection.exists(this.#endpointKey)) === 1;
    if (stopped === (await this.queue.isPaused())) return;
    await (stopped ? this.queue.pause() : this.queue.resume());
  }

  /** A stop is for the URL that answered 410: once another URL is configured, deliveries go on. */
  async resumeIfMoved(url: string): Promise<boolean> {
    const gone = await this.#connection.hget(this.#endpointKey, "url");
    if (gone === null || gone === digest(url)) return false;
    await this.resume();
    return true;
  }

  /** The newest deliveries that gave up, of `accounts` only when given. */
  async failed(limit: number, accounts?: ReadonlySet<string>): Promise<FailedDelivery[]> {
    const out: FailedDelivery[] = [];
    for (let start = 0; out.length < limit; start += FAILED_PAGE) {
      const jobs = await this.queue.getFailed(start, start + FAILED_PAGE - 1);
      for (const job of jobs) {
        const seen = failedDeliveryOf(job);
        if (accounts === undefined || (seen.account !== undefined && accounts.has(seen.account)))
          out.push(seen);
        if (out.length === limit) break;
      }
      if (jobs.length < FAILED_PAGE) break;
    }
    return out;
  }

  /** Sends a delivery that gave up again, with a full schedule of attempts. */
  async redeliver(eventId: string, accounts?: ReadonlySet<string>): Promise<RedeliverOutcome> {
    const job = await this.queue.getJob(deliveryJobId(eventId));
    if (!job) return "not_found";
    const { account } = failedDeliveryOf(job);
    if (accounts !== undefined && (account === undefined || !accounts.has(account)))
      return "not_found";
    if (!(await job.isFailed())) return "not_failed";
    await job.retry("failed", { resetAttemptsMade: true, resetAttemptsStarted: true });
    return "redelivered";
  }

  /** Idempotent. */
  close(): Promise<void> {
    this.#closing ??= closeOnceReady(this.queue);
    return this.#closing;
  }
}

function failedDeliveryOf(job: Job<Delivery>): FailedDelivery {
  const { account, jobId } = bodyFields(job.data?.body);
  return {
    eventId: String(job.data?.eventId ?? job.id),
    account,
    jobId,
    attempts: job.attemptsMade,
    failedAt: job.finishedOn === undefined ? undefined : new Date(job.finishedOn).toISOString(),
    reason: job.failedReason ?? "",
  };
}

function bodyFields(body: unknown): { account?: string; jobId?: string } {
  try {
    const json = JSON.parse(String(body)) as { data?: unknown };
    // An event envelope carries its job's or batch's fields in `data`; an earlier body was bare.
    const parsed = (typeof json.data === "object" && json.data !== null ? json.data : json) as {
      account?: unknown;
      jobId?: unknown;
    };
    return {
      ...(typeof parsed.account === "string" && { account: parsed.account }),
      ...(typeof parsed.jobId === "string" && { jobId: parsed.jobId }),
    };
  } catch {
    return {};
  }
}

/** The URL is kept only as a digest: it may carry a token of the receiver's. */
function digest(url: string): string {
  return createHash("sha256").update(url).digest("base64url");
}
