/** How long a round trip's measure counts: older ones are forgotten (a clock that drifted). */
const KEPT_SECONDS = 10;

/** The best of one second's round trips. */
interface Second {
  readonly second: number;
  /** Least time a call took, send to answer (ms). */
  roundTripMs: number;
  /** Greatest of Redis's time (as a script read it) less the local time its answer arrived. */
  replyLag: number;
}

/**
 * Where Redis's clock stands against this process's (`performance.now()`), from the calls it
 * times: each gives the local times the call left and its answer arrived, and Redis's time
 * read by its script in between. Redis's time T, answered at local time b, is reached on the
 * local clock at T - (T - b) at the latest; the greatest T - b seen (the fastest answer) gives
 * the local time at which an answer stamped with a Redis time arrives at the soonest: never
 * before that Redis time, and later by at most the fastest reply's travel. Kept per second for
 * the last ten, so a clock step on Redis's host is forgotten.
 */
export class RedisClock {
  readonly #seconds: Second[] = [];

  /** A call that left at `sentAt` and was answered at `answeredAt` (local), `redisMs` between. */
  sample(sentAt: number, redisMs: number, answeredAt: number): void {
    const second = Math.floor(answeredAt / 1000);
    let last = this.#seconds.at(-1);
    if (last?.second !== second) {
      last = { second, roundTripMs: Number.POSITIVE_INFINITY, replyLag: Number.NEGATIVE_INFINITY };
      this.#seconds.push(last);
      while ((this.#seconds[0] as Second).second <= second - KEPT_SECONDS) this.#seconds.shift();
    }
    last.roundTripMs = Math.min(last.roundTripMs, answeredAt - sentAt);
    last.replyLag = Math.max(last.replyLag, redisMs - answeredAt);
  }

  /** The least round trip of the last seconds (ms), 0 before any call. */
  roundTripMs(): number {
    const least = Math.min(...this.#seconds.map((s) => s.roundTripMs));
    return Number.isFinite(least) ? least : 0;
  }

  /**
   * The local time at which Redis's time `redisMs` is reached as seen through its fastest answer:
   * never before it on Redis's clock. Undefined before any call.
   */
  localOf(redisMs: number): number | undefined {
    const lag = Math.max(...this.#seconds.map((s) => s.replyLag));
    return Number.isFinite(lag) ? redisMs - lag : undefined;
  }
}
