import { hostname } from "node:os";
import type { JobsOptions, Queue } from "bullmq";
import type { Logger } from "../logger.js";
import { duplicateConnection, type RedisConnection } from "../redis/connection.js";
import { watchRedisErrors } from "../redis/errors.js";
import { redisContext } from "../redis/redis-context.js";
import type { RepeatedErrors } from "../redis/repeated-errors.js";
import type { ReplicaWaits } from "../redis/replica-waits.js";
import { deliveryJobId, WEBHOOK_TAG } from "./webhook-deliveries.js";

export const WEBHOOK_GROUP = "webhooks";
/** An entry another relay read but never acknowledged (it died) is taken over after this long. */
const CLAIM_IDLE_MS = 30_000;
const READ_COUNT = 200;
const BLOCK_MS = 1_000;
/** With several streams (a cluster), each is read without blocking; a round that found nothing waits this long. */
const POLL_MS = 200;

/** The results streams webhooks are sent from, as the delivery and its relay both read them. */
export interface ResultStreamSource {
  /** Not closed by the webhooks; the relay duplicates it for its blocking reads. */
  readonly connection: RedisConnection;
  /** One stream, or one per account on a cluster; each once. */
  readonly streams: readonly string[];
  readonly logger: Logger;
  /** Where a run of the same error is logged once per interval; else every error is logged. */
  readonly errors?: RepeatedErrors | undefined;
}

export interface WebhookRelayOptions extends ResultStreamSource {
  /** Redis key prefix (config.redisPrefix). */
  readonly prefix: string;
  readonly queue: Queue;
  /** Each delivery job's attempts, backoff and retention. */
  readonly jobOptions: JobsOptions;
}

type Entries = [string, string[]][];

/**
 * Moves events from the results streams into the webhook queue, through a consumer group:
 * each entry is read by one relay, and acknowledged only once queued. The job id derives from
 * the event's id, so an entry read twice (a relay died before acknowledging) is queued once.
 * One stream is read blocking; several (one per account on a cluster, each on its own shard,
 * where one command cannot read two) are read in turn without blocking.
 */
export class WebhookRelay {
  readonly #options: WebhookRelayOptions;
  readonly #reader: RedisConnection;
  readonly #consumer = `${hostname()}-${process.pid}`;
  readonly #replicas: ReplicaWaits;
  #running = false;
  #loop: Promise<void> | undefined;

  constructor(options: WebhookRelayOptions) {
    this.#options = options;
    this.#reader = watchRedisErrors(
      duplicateConnection(options.connection),
      options.logger,
      "webhook relay",
    );
    this.#replicas = redisContext(options.connection, options.prefix).replicas;
  }

  async start(): Promise<void> {
    for (const stream of this.#options.streams) {
      try {
        await this.#options.connection.xgroup("CREATE", stream, WEBHOOK_GROUP, "$", "MKSTREAM");
      } catch (error) {
        if (!String(error).includes("BUSYGROUP")) throw error;
      }
    }
    this.#running = true;
    this.#loop = this.#run();
  }

  async close(): Promise<void> {
    this.#running = false;
    this.#reader.disconnect();
    await this.#loop?.catch(() => undefined);
  }

  async #run(): Promise<void> {
    let lastClaim = 0;
    const blocking = this.#options.streams.length === 1;
    while (this.#running) {
      try {
        if (Date.now() - lastClaim > CLAIM_IDLE_MS) {
          lastClaim = Date.now();
          for (const stream of this.#options.streams) await this.#claimIdle(stream);
        }
        let found = 0;
        for (const stream of this.#options.streams) found += await this.#readNew(stream, blocking);
        if (!blocking && found === 0) await new Promise((r) => setTimeout(r, POLL_MS));
      } catch (error) {
        if (!this.#running) return;
        const failed = error instanceof Error ? error : new Error(String(error));
        const msg = "webhook relay: read failed; retrying";
        if (this.#options.errors) this.#options.errors.report("webhook relay", msg, failed);
        else this.#options.logger.error({ err: failed.message }, msg);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  /** Takes over the entries another relay read and never acknowledged (it died). */
  async #claimIdle(stream: string): Promise<void> {
    const [, claimed] = (await this.#options.connection.xautoclaim(
      stream,
      WEBHOOK_GROUP,
      this.#consumer,
      CLAIM_IDLE_MS,
      "0-0",
      "COUNT",
      READ_COUNT,
    )) as [string, Entries];
    await this.#forward(stream, claimed);
  }

  /** Forwards the stream's new entries; answers how many there were. */
  async #readNew(stream: string, blocking: boolean): Promise<number> {
    const read = (await this.#reader.xreadgroup(
      "GROUP",
      WEBHOOK_GROUP,
      this.#consumer,
      "COUNT",
      READ_COUNT,
      ...((blocking ? ["BLOCK", BLOCK_MS] : []) as ["BLOCK", number]),
      "STREAMS",
      stream,
      ">",
    )) as [string, Entries][] | null;
    const entries = read?.[0]?.[1] ?? [];
    await this.#forward(stream, entries);
    return entries.length;
  }

  async #forward(stream: string, entries: Entries): Promise<void> {
    const live = entries.flatMap(([id, fields]) => {
      const delivery = fields === null ? undefined : deliveryOf(id, fields);
      return delivery ? [delivery] : [];
    });
    if (live.length > 0) {
      await this.#options.queue.addBulk(
        live.map((delivery) => ({
          name: "deliver",
          data: delivery,
          opts: { ...this.#options.jobOptions, jobId: deliveryJobId(delivery.eventId) },
        })),
      );
      // Acknowledged only once a failover would keep the deliveries: they live on another
      // shard than the stream, so a lost delivery would otherwise be a webhook never sent.
      await this.#replicas.ensure(WEBHOOK_TAG);
    }
    if (entries.length > 0) {
      await this.#options.connection.xack(stream, WEBHOOK_GROUP, ...entries.map(([id]) => id));
    }
  }
}

/**
 * What a stream entry delivers: its event envelope, under the envelope's id; an entry an
 * earlier release wrote (a bare result) under the entry's id.
 */
function deliveryOf(
  entryId: string,
  fields: readonly string[],
): { eventId: string; body: string } | undefined {
  const value = (name: string) => {
    for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
    return undefined;
  };
  const event = value("event");
  if (event !== undefined) {
    const id = (JSON.parse(event) as { id?: unknown }).id;
    return { eventId: typeof id === "string" ? id : entryId, body: event };
  }
  const result = value("result");
  return result === undefined ? undefined : { eventId: entryId, body: result };
}
