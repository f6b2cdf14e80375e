import { NumberedLog } from "./numbered-log.js";

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
export class RequestLog extends NumberedLog<LoggedRequest> {
  /** Records a request; returns its sequence number. */
  record(entry: Omit<LoggedRequest, "seq">): number {
    return this.append(entry).seq;
  }

  /** Marks request `seq` as refused by the rate limit. */
  markRateLimited(seq: number): void {
    this.update(seq, (entry) => ({ ...entry, rateLimited: true }));
  }
}
