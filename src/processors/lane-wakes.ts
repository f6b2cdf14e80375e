import type { Logger } from "../logger.js";
import { parseLaneWake } from "../queues/lanes.js";
import { closeRedis } from "../redis/close.js";
import type { RedisConnection } from "../redis/connection.js";
import { laneWakeChannel, turnWakeChannel } from "../redis/keys.js";

/**
 * Bulk requests waiting at the rate gate for their account's next free slot, woken early when
 * an urgent job is enqueued on that account. A worker whose places are all held by waiting
 * bulk jobs fetches an urgent job only once one of them hands its job back, and a bulk job
 * asks the gate again only when its wait ends (about once a slot interval): woken, one asks at
 * once, the gate tells it to make room, and the urgent job is fetched without that wait.
 */
export class LaneWakes {
  readonly #waiting = new Map<string, Set<() => void>>();

  /** Waits `ms`, or less if woken, or until `signal` aborts (the caller checks it). */
  sleep(account: string, ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      const waiters = this.#waitersOf(account);
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener("abort", done, { once: true });
      waiters.add(done);
    });
  }

  /** Ends the wait of up to `count` of the account's waiting requests, longest waiting first. */
  wake(account: string, count: number): void {
    let left = count;
    for (const done of this.#waiting.get(account) ?? []) {
      if (left <= 0) break;
      left -= 1;
      done();
    }
  }

  #waitersOf(account: string): Set<() => void> {
    let waiters = this.#waiting.get(account);
    if (!waiters) {
      waiters = new Set();
      this.#waiting.set(account, waiters);
    }
    return waiters;
  }
}

/**
 * Subscribes `subscriber` (a connection of its own, closed with the listener) to the wake
 * messages of `prefix`, lanes' and turns' (`turnWake`: an account was rung for work due now),
 * without waiting: the workers start even while Redis is away, and ioredis subscribes again
 * after a reconnection. Waking is only a shortcut, so a subscription that fails is logged and
 * the workers go on as without it.
 */
export function listenForWakes(
  subscriber: RedisConnection,
  prefix: string,
  wakes: { readonly lanes: LaneWakes; readonly turns: () => void },
  logger: Logger,
): { close(): Promise<void> } {
  const channel = laneWakeChannel(prefix);
  const turnChannel = turnWakeChannel(prefix);
  subscriber.on("message", (from: string, message: string) => {
    if (from === turnChannel) return wakes.turns();
    const wake = from === channel ? parseLaneWake(message) : undefined;
    if (wake) wakes.lanes.wake(wake.account, wake.count);
  });
  subscriber.subscribe(channel, turnChannel).catch((error: Error) => {
    logger.warn({ err: error.message }, "urgent jobs wait for the next poll: no lane wakes");
  });
  return { close: () => closeRedis(subscriber) };
}
