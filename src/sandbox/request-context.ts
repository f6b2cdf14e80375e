import type { AccountRecord } from "./records.js";

/** Who is asking, and under which idempotency key (null on non-IDEM operations). */
export interface RequestContext {
  readonly account: AccountRecord;
  readonly idempotencyKey: string | null;
}
