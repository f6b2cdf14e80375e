/**
 * A sliding one-second window per key: at most `limit` accepted requests in any 1000 ms.
 * Refused requests do not count, as at most providers.
 */
export class SlidingWindowLimiter {
  readonly #accepted = new Map<string, number[]>();

  /** Undefined when accepted; otherwise the whole seconds to wait (at least 1). */
  check(key: string, limit: number, now: number): number | undefined {
    const times = this.#accepted.get(key) ?? [];
    let drop = 0;
    while (drop < times.length && (times[drop] as number) <= now - 1000) drop += 1;
    if (drop > 0) times.splice(0, drop);
    if (times.length >= limit) {
      return Math.max(1, Math.ceil(((times[0] as number) + 1000 - now) / 1000));
    }
    times.push(now);
    this.#accepted.set(key, times);
    return undefined;
  }
}
