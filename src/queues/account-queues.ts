import { Queue, type Telemetry } from "bullmq";
import type { RedisConnection } from "../redis/connection.js";
import type { Keyspace } from "../redis/keys.js";
import { redisContext } from "../redis/redis-context.js";
import { closeOnceReady } from "./close-queue.js";
import type { JobData } from "./job-data.js";
import { accountQueueName } from "./queue-names.js";
import { WorkDue } from "./work-due.js";

/**
 * The BullMQ queue of each account, opened once on one connection and shared by everything
 * of a process that enqueues, pauses, counts or replays an account's jobs.
 */
export class AccountQueues {
  readonly #connection: RedisConnection;
  readonly #space: Keyspace;
  readonly #telemetry: Telemetry | undefined;
  readonly #queues = new Map<string, Queue<JobData>>();
  /** Rung by whoever gives an account work through these queues. */
  readonly due: WorkDue;

  /**
   * Opens the queues of `accounts` now; any other account's on its first use. `telemetry`:
   * BullMQ's spans (src/tracing), when tracing is on.
   */
  constructor(
    connection: RedisConnection,
    prefix: string,
    accounts: readonly string[] = [],
    telemetry?: Telemetry,
  ) {
    this.#connection = connection;
    this.#space = redisContext(connection, prefix).space;
    this.#telemetry = telemetry;
    this.due = new WorkDue(connection, prefix);
    for (const account of accounts) this.get(account);
  }

  /** The account's queue, opened on first use. */
  get(account: string): Queue<JobData> {
    let queue = this.#queues.get(account);
    if (!queue) {
      queue = new Queue<JobData>(accountQueueName(this.#space, account), {
        connection: this.#connection,
        prefix: this.#space.prefix,
        ...(this.#telemetry && { telemetry: this.#telemetry }),
      });
      this.#queues.set(account, queue);
    }
    return queue;
  }

  /** The queues opened so far, by account (a live view: later openings appear in it). */
  get byAccount(): ReadonlyMap<string, Queue<JobData>> {
    return this.#queues;
  }

  /** Closes the queues opened so far (not the connection). Safe to call twice. */
  async close(): Promise<void> {
    const queues = [...this.#queues.values()];
    this.#queues.clear();
    await Promise.allSettled(queues.map(closeOnceReady));
  }
}
