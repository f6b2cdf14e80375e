// Reading moneyq's results stream with a consumer group: each event (a job's result, or a
// batch's event) goes to one consumer of the group, and stays pending until acknowledged, so
// a consumer that dies loses nothing.
// Run: REDIS_URL=redis://127.0.0.1:6379 npx tsx examples/results-consumer.ts
import { type Cluster, Redis } from "ioredis";

export interface ConsumeOptions {
  /** The stream: `<MONEYQ_REDIS_PREFIX>:results` (default `moneyq:results`). */
  readonly stream: string;
  readonly group: string;
  readonly consumer: string;
  /** Called once per event; the event is acknowledged after it returns. */
  readonly handle: (event: StreamEvent) => Promise<void>;
  readonly signal?: AbortSignal;
}

/** An entry's event envelope: `job.<result>` with the result as `data`, or `batch.<event>`. */
export interface StreamEvent {
  readonly type: string;
  /** Unique: deduplicate on it (webhooks send it as `webhook-id`). */
  readonly id: string;
  readonly timestamp: string;
  readonly data: Record<string, unknown>;
}

/** The entry's event; an entry written before events had envelopes holds a bare result. */
function eventOf(id: string, fields: string[]): StreamEvent {
  const event = fields.indexOf("event");
  if (event >= 0) return JSON.parse(fields[event + 1] as string) as StreamEvent;
  const result = JSON.parse(fields[fields.indexOf("result") + 1] as string);
  return { type: `job.${result.result}`, id, timestamp: result.finishedAt, data: result };
}

export async function consumeResults(
  redis: Redis | Cluster,
  options: ConsumeOptions,
): Promise<void> {
  try {
    // "0": a new group starts with every result still in the stream.
    await redis.xgroup("CREATE", options.stream, options.group, "0", "MKSTREAM");
  } catch (error) {
    if (!String(error).includes("BUSYGROUP")) throw error;
  }
  // First what this consumer read before but never acknowledged, then new entries.
  let cursor = "0";
  while (!options.signal?.aborted) {
    const read = (await redis.xreadgroup(
      "GROUP",
      options.group,
      options.consumer,
      "COUNT",
      100,
      "BLOCK",
      500,
      "STREAMS",
      options.stream,
      cursor,
    )) as [string, [string, string[]][]][] | null;
    const entries = read?.[0]?.[1] ?? [];
    if (cursor === "0" && entries.length === 0) cursor = ">";
    for (const [id, fields] of entries) {
      await options.handle(eventOf(id, fields));
      await redis.xack(options.stream, options.group, id);
      // Stop at once: what was read but not handled stays pending for the next start.
      if (options.signal?.aborted) return;
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
  const stop = new AbortController();
  process.once("SIGINT", () => stop.abort());
  await consumeResults(redis, {
    stream: "moneyq:results",
    group: "payouts-ledger",
    consumer: `ledger-${process.pid}`,
    signal: stop.signal,
    handle: async ({ type, data }) => {
      if (type.startsWith("job."))
        console.log(data.jobId, data.result, data.upstreamId ?? data.code);
      else console.log(type, data.batchId, data.state);
    },
  });
  await redis.quit();
}
