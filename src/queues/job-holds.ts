import type { ApprovalPolicy } from "../config/load-config.js";
import { jobHoldKey, type Keyspace } from "../redis/keys.js";
import type { JobEnvelope } from "./job-envelope.js";
import { compareDecimal, rowMoney } from "./job-money.js";
import type { PaymentMatch } from "./payment-repeats.js";

/**
 * Work awaiting approval without an expiry is held this long at a time; a job that comes up
 * still unapproved is held again. Approval releases it at once.
 */
export const APPROVAL_HOLD_MS = 24 * 3_600_000;
/** The furthest ahead work may be scheduled. */
export const MAX_SCHEDULE_AHEAD_MS = 366 * 24 * 3_600_000;

/** The hold of a job enqueued alone: its hash (the gate reads it) and its delay. */
export interface JobHold {
  readonly key: string;
  readonly fields: Readonly<Record<string, string>>;
  readonly delayMs: number;
}

/** The rule a job's `notBefore` breaks, or undefined. */
export function notBeforeRule(envelope: JobEnvelope, now: number): string | undefined {
  if (envelope.notBefore === undefined) return undefined;
  if (envelope.batchId !== undefined)
    return "not on a batch's job: give the batch its notBefore instead";
  if (Date.parse(envelope.notBefore) - now > MAX_SCHEDULE_AHEAD_MS) return "at most 366 days ahead";
  return undefined;
}

/**
 * What holds a job enqueued alone before it may be sent: its `notBefore` ahead, or its
 * account's policy asking approval for an amount over `jobsOver` in its currency. Undefined
 * for a batch's job (its batch holds it) and for a job nothing holds.
 */
export function jobHoldOf(
  space: Keyspace,
  envelope: JobEnvelope,
  jobId: string,
  options: {
    policy: ApprovalPolicy | undefined;
    submittedBy: string | undefined;
    now: number;
    /** Payments it repeats, under a `hold` policy: it waits for approval, naming them. */
    repeats?: readonly PaymentMatch[] | undefined;
  },
): JobHold | undefined {
  if (envelope.batchId !== undefined) return undefined;
  const { policy, submittedBy, now, repeats } = options;
  const notBeforeMs = envelope.notBefore === undefined ? 0 : Date.parse(envelope.notBefore);
  const money = rowMoney(envelope.request);
  const limit = money === undefined ? undefined : policy?.jobsOver[money.currency];
  const approval =
    (repeats !== undefined && repeats.length > 0) ||
    (money !== undefined && limit !== undefined && compareDecimal(money.amount, limit) > 0);
  if (!approval && notBeforeMs <= now) return undefined;
  const expiresAfterMs = approval ? policy?.expiresAfterMs : undefined;
  const fields: Record<string, string> = {
    jobId,
    account: envelope.account,
    kind: envelope.kind,
    idempotencyKey: envelope.idempotencyKey,
    createdAt: new Date(now).toISOString(),
    state: approval ? "awaiting_approval" : "scheduled",
    ...(submittedBy !== undefined && { submittedBy }),
    ...(notBeforeMs > now && {
      notBefore: new Date(notBeforeMs).toISOString(),
      notBeforeMs: String(notBeforeMs),
    }),
    ...(approval && { approval: "pending" }),
    ...(repeats !== undefined && repeats.length > 0 && { repeats: JSON.stringify(repeats) }),
    ...(expiresAfterMs !== undefined && {
      approvalExpiresMs: String(now + expiresAfterMs),
      approvalExpiresAt: new Date(now + expiresAfterMs).toISOString(),
    }),
  };
  const delayMs = approval ? (expiresAfterMs ?? APPROVAL_HOLD_MS) : notBeforeMs - now;
  return { key: jobHoldKey(space, envelope.account, jobId), fields, delayMs };
}
