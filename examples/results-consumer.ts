// Reading moneyq's results with a consumer group: each event (a job's result, or a batch's
// event) goes to one consumer of the group, and stays pending until acknowledged, so a consumer
// that dies loses nothing. On a Redis Cluster the results are one stream per account: the
// consumer reads every account's stream and hands the events over in the order of their ids.
// Run: REDIS_URL=redis://127.0.0.1:6379 npx tsx examples/results-consumer.ts
import { type Cluster, Redis } from "ioredis";

export interface ConsumeOptions {
  /** The streams to read: `resultStreams()` names them. */
  readonly streams: readonly string[];
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

/**
 * The results streams under MONEYQ_REDIS_PREFIX `prefix` (default `moneyq`): one for every
 * account on a single Redis, `<prefix>:results`; one per account on a Redis Cluster,
 * `<prefix>:results:{<alias>}`, for each alias of MONEYQ_ACCOUNTS.
 */
export function resultStreams(
  prefix: string,
  accounts: readonly string[],
  cluster: boolean,
): string[] {
  return cluster ? accounts.map((alias) => `${prefix}:results:{${alias}}`) : [`${prefix}:results`];
}

/** The entry's event; an entry written before events had envelopes holds a bare result. */
function eventOf(id: string, fields: string[]): StreamEvent {
  const event = fields.indexOf("event");
  if (event >= 0) return JSON.parse(fields[event + 1] as string) as StreamEvent;
  const result = JSON.parse(fields[fields.indexOf("result") + 1] as string);
  return { type: `job.${result.result}`, id, timestamp: result.finishedAt, data: result };
}

interface Entry {
  readonly stream: string;
  readonly id: string;
  readonly fields: string[];
}

/** A round that found nothing on several streams waits this long before the next. */
const IDLE_MS = 200;

export async function consumeResults(
  redis: Redis | Cluster,
  options: ConsumeOptions,
): Promise<void> {
  for (const stream of options.streams) await createGroup(redis, stream, options.group);
  // Per stream, first what this consumer read before but never acknowledged ("0"), then new
  // entries (">").
  const cursors = new Map(options.streams.map((stream) => [stream, "0"]));
  while (!options.signal?.aborted) {
    const entries = await readRound(redis, options, cursors);
    if (entries.length === 0 && options.streams.length > 1)
      await new Promise((r) => setTimeout(r, IDLE_MS));
    for (const { stream, id, fields } of entries) {
      await options.handle(eventOf(id, fields));
      await redis.xack(stream, options.group, id);
      // Stop at once: what was read but not handled stays pending for the next start.
      if (options.signal?.aborted) return;
    }
  }
}

async function createGroup(redis: Redis | Cluster, stream: string, group: string): Promise<void> {
  try {
    // "0": a new group starts with every result still in the stream.
    await redis.xgroup("CREATE", stream, group, "0", "MKSTREAM");
  } catch (error) {
    if (!String(error).includes("BUSYGROUP")) throw error;
  }
}

/**
 * One read of each stream (one command each: on a cluster the streams lie in different slots),
 * merged in the order of their ids: the time each master wrote them, exact within an account.
 * A single stream is read blocking, so that a quiet consumer costs Redis nothing.
 */
async function readRound(
  redis: Redis | Cluster,
  options: ConsumeOptions,
  cursors: Map<string, string>,
): Promise<Entry[]> {
  const block = options.streams.length === 1 ? ["BLOCK", 500] : [];
  const entries: Entry[] = [];
  for (const [stream, cursor] of cursors) {
    const read = (await redis.xreadgroup(
      "GROUP",
      options.group,
      options.consumer,
      "COUNT",
      100,
      ...(block as ["BLOCK", number]),
      "STREAMS",
      stream,
      cursor,
    )) as [string, [string, string[]][]][] | null;
    const found = read?.[0]?.[1] ?? [];
    if (cursor === "0" && found.length === 0) cursors.set(stream, ">");
    for (const [id, fields] of found) entries.push({ stream, id, fields });
  }
  return entries.sort((a, b) => compareIds(a.id, b.id));
}

/** Stream ids `<ms>-<seq>` in their order. */
function compareIds(a: string, b: string): number {
  const [aMs, aSeq] = a.split("-").map(Number) as [number, number];
  const [bMs, bSeq] = b.split("-").map(Number) as [number, number];
  return aMs - bMs || aSeq - bSeq;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
  const stop = new AbortController();
  process.once("SIGINT", () => stop.abort());
  // On a Redis Cluster: connect with ioredis's Cluster, and pass
  // resultStreams(prefix, <every alias of MONEYQ_ACCOUNTS>, true).
  await consumeResults(redis, {
    streams: resultStreams("moneyq", [], false),
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
