export interface LoggedRequest {
  readonly seq: number;
  /** Sandbox clock, milliseconds. */
  readonly at: number;
  readonly accountId: string | null;
  readonly method: string;
  readonly path: string;
}

/** The last N requests that reached /v1, for tests that measure what a client sent. */
export class RequestLog {
  readonly #capacity: number;
  readonly #ring: LoggedRequest[] = [];
  #seq = 0;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  record(entry: Omit<LoggedRequest, "seq">): void {
    this.#seq += 1;
    if (this.#ring.length >= this.#capacity) this.#ring.shift();
    this.#ring.push({ seq: this.#seq, ...entry });
  }

  list(filter: { accountId?: string; afterSeq?: number }): LoggedRequest[] {
    return this.#ring.filter(
      (r) =>
        (filter.accountId === undefined || r.accountId === filter.accountId) &&
        (filter.afterSeq === undefined || r.seq > filter.afterSeq),
    );
  }
}
