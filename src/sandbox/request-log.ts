export interface LoggedRequest {
  readonly seq: number;
  /** Sandbox clock, milliseconds. */
  readonly at: number;
  readonly accountId: string | null;
  readonly method: string;
  readonly path: string;
  /** The request's idempotency key header, if it had one. */
  readonly idempotencyKey?: string;
  /** Refused with 429 by the account's rate limit. */
  readonly rateLimited?: true;
}

/** The last N requests that reached /v1, for tests that measure what a client sent. */
export class RequestLog {
  readonly #capacity: number;
  readonly #ring: LoggedRequest[] = [];
  #seq = 0;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** Records a request; returns its sequence number. */
  record(entry: Omit<LoggedRequest, "seq">): number {
    this.#seq += 1;
    if (this.#ring.length >= this.#capacity) this.#ring.shift();
    this.#ring.push({ seq: this.#seq, ...entry });
    return this.#seq;
  }

  /** Marks request `seq` as refused by the rate limit. */
  markRateLimited(seq: number): void {
    const at = this.#ring.findLastIndex((r) => r.seq === seq);
    const entry = this.#ring[at];
    if (entry) this.#ring[at] = { ...entry, rateLimited: true };
  }

  list(filter: { accountId?: string; afterSeq?: number }): LoggedRequest[] {
    return this.#ring.filter(
      (r) =>
        (filter.accountId === undefined || r.accountId === filter.accountId) &&
        (filter.afterSeq === undefined || r.seq > filter.afterSeq),
    );
  }
}
