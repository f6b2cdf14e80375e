import type { CurrencyLimits, VelocityLimit, VelocityLimits } from "../config/load-config.js";
import type { JobEnvelope } from "../queues/job-envelope.js";
import { JOB_KINDS } from "../queues/job-kinds.js";
import { rowMoney } from "../queues/job-money.js";
import { beneficiaryOf } from "./beneficiary.js";
import { amountUnits, DAY_MS, HOUR_MS } from "./velocity-limits.js";

/** One limit a payout's request is checked against, as the rate gate's script reads it. */
export interface LimitCheck {
  readonly scope: "currency" | "beneficiary";
  readonly windowMs: number;
  /** -1: no maximum. */
  readonly maxUnits: number;
  readonly maxCount: number;
  /** The beneficiary's hash, for a per-beneficiary limit. */
  readonly beneficiary?: string;
}

/** What the rate gate checks of a payout's request before it takes a slot. */
export interface OutflowCheck {
  readonly jobId: string;
  readonly currency: string;
  readonly units: number;
  readonly limits: readonly LimitCheck[];
}

/** Whether a job of this kind sends money out of the account. */
export function isOutflow(kind: string): boolean {
  return (JOB_KINDS as Record<string, { outflow?: boolean }>)[kind]?.outflow === true;
}

function check(
  limit: VelocityLimit | undefined,
  windowMs: number,
  beneficiary?: string,
): LimitCheck | undefined {
  if (limit === undefined) return undefined;
  return {
    scope: beneficiary === undefined ? "currency" : "beneficiary",
    windowMs,
    maxUnits: limit.amount === undefined ? -1 : amountUnits(limit.amount),
    maxCount: limit.count ?? -1,
    ...(beneficiary !== undefined && { beneficiary }),
  };
}

function limitChecks(limits: CurrencyLimits | undefined, beneficiary: string | undefined) {
  if (limits === undefined) return [];
  return [
    check(limits.perHour, HOUR_MS),
    check(limits.perDay, DAY_MS),
    beneficiary === undefined ? undefined : check(limits.perBeneficiaryPerDay, DAY_MS, beneficiary),
  ].filter((c): c is LimitCheck => c !== undefined);
}

/**
 * The outflow check of a payout's submission: its currency's lane hold, and the account's
 * velocity limits for that currency. Undefined for any other kind, or a request without a
 * currency and amount (its checks refuse it before it is sent).
 */
export function outflowCheckOf(
  envelope: JobEnvelope,
  jobId: string,
  velocity: VelocityLimits,
): OutflowCheck | undefined {
  if (!isOutflow(envelope.kind)) return undefined;
  const money = rowMoney(envelope.request);
  if (money === undefined) return undefined;
  const beneficiary = beneficiaryOf(envelope.kind, envelope.request);
  return {
    jobId,
    currency: money.currency,
    units: amountUnits(money.amount),
    limits: limitChecks(velocity.get(envelope.account)?.get(money.currency), beneficiary),
  };
}
