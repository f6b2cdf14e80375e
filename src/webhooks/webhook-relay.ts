import { hostname } from "node:os";
import type { JobsOptions, Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "../logger.js";
import { watchRedisErrors } from "../redis/errors.js";
import { deliveryJobId } from "./webhook-deliveries.js";

export const WEBHOOK_GROUP = "webhooks";
/** An entry another relay read but never acknowledged (it died) is taken over after this long. */
const CLAIM_IDLE_MS = 30_000;
const READ_COUNT = 200;
const BLOCK_MS = 1_000;

/** The results stream webhooks are sent from, as the delivery and its relay both read it. */
export interface ResultStreamSource {
  /** Not closed by the webhooks; the relay duplicates it for its blocking reads. */
  readonly connection: Redis;
  readonly streamKey: string;
  readonly logger: Logger;
}

export interface WebhookRelayOptions extends ResultStreamSource {
  readonly queue: Queue;
  /** Each delivery job's attempts, backoff and retention. */
  readonly jobOptions: JobsOptions;
}

/**
 * Moves events from the stream into the webhook queue, through a consumer group: each entry
 * is read by one relay, and acknowledged only once queued. The job id derives from the event's
 * id, so an entry read twice (a relay died before acknowledging) is queued once.
 */
export class WebhookRelay {
  readonly #options: WebhookRelayOptions;
  readonly #reader: Redis;
  readonly #consumer = `${hostname()}-${process.pid}`;
  #running = false;
  #loop: Promise<void> | undefined;

  constructor(options: WebhookRelayOptions) {
    this.#options = options;
    this.#reader = watchRedisErrors(
      options.connection.duplicate(),
      options.logger,
      "webhook relay",
    );
  }

  async start(): Promise<void> {
    try {
      await this.#options.connection.xgroup(
        "CREATE",
        this.#options.streamKey,
        WEBHOOK_GROUP,
        "$",
        "MKSTREAM",
      );
    } catch (error) {
      if (!String(error).includes("BUSYGROUP")) throw error;
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
    while (this.#running) {
      try {
        if (Date.now() - lastClaim > CLAIM_IDLE_MS) {
          lastClaim = Date.now();
          const [, claimed] = (await this.#options.connection.xautoclaim(
            this.#options.streamKey,
            WEBHOOK_GROUP,
            this.#consumer,
            CLAIM_IDLE_MS,
            "0-0",
            "COUNT",
            READ_COUNT,
          )) as [string, [string, string[]][]];
          await this.#forward(claimed);
        }
        const read = (await this.#reader.xreadgroup(
          "GROUP",
          WEBHOOK_GROUP,
          this.#consumer,
          "COUNT",
          READ_COUNT,
          "BLOCK",
          BLOCK_MS,
          "STREAMS",
          this.#options.streamKey,
          ">",
        )) as [string, [string, string[]][]][] | null;
        if (read) await this.#forward(read[0]?.[1] ?? []);
      } catch (error) {
        if (!this.#running) return;
        this.#options.logger.error({ err: String(error) }, "webhook relay: read failed; retrying");
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  async #forward(entries: [string, string[]][]): Promise<void> {
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
    }
    if (entries.length > 0) {
      await this.#options.connection.xack(
        this.#options.streamKey,
        WEBHOOK_GROUP,
        ...entries.map(([id]) => id),
      );
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
