// Outflow safety: velocity limits by account and currency, insufficient funds holds.
import { z } from "zod";
import { offOrDuration } from "./books.js";
import type { EnvReader } from "./env-reader.js";
import { readJsonList } from "./json-lists.js";
import { currencyCode, decimalAmount } from "./rules.js";

/** At most this amount (as decimal text) and this many payouts in a velocity limit's window. */
export interface VelocityLimit {
  readonly amount?: string;
  readonly count?: number;
}

/** One currency's velocity limits on an account (docs/safety.md). */
export interface CurrencyLimits {
  readonly perHour?: VelocityLimit | undefined;
  readonly perDay?: VelocityLimit | undefined;
  readonly perBeneficiaryPerDay?: VelocityLimit | undefined;
}

/** Each account's velocity limits, by currency. */
export type VelocityLimits = ReadonlyMap<string, ReadonlyMap<string, CurrencyLimits>>;

/** Outflow safety (docs/safety.md). */
export interface OutflowConfig {
  /** Each account's velocity limits, by currency; none by default. */
  readonly velocity: VelocityLimits;
  /**
   * A payout refused for insufficient funds holds its currency's lane (`hold`, the default) or
   * ends `failed` (`fail`).
   */
  readonly fundsHold: boolean;
  /**
   * How long a currency's lane held for insufficient funds waits before it tries again by
   * itself (ms); undefined: until an operator resumes it.
   */
  readonly fundsRetryMs: number | undefined;
}

const VelocityWindow = z
  .strictObject({ amount: decimalAmount.optional(), count: z.int().min(0).optional() })
  .refine((w) => w.amount !== undefined || w.count !== undefined, {
    message: "give amount, count or both",
  });

const VelocityEntry = z
  .strictObject({
    account: z.string(),
    currency: currencyCode,
    perHour: VelocityWindow.optional(),
    perDay: VelocityWindow.optional(),
    perBeneficiaryPerDay: VelocityWindow.optional(),
  })
  .refine(
    (e) =>
      e.perHour !== undefined || e.perDay !== undefined || e.perBeneficiaryPerDay !== undefined,
    { message: "give perHour, perDay or perBeneficiaryPerDay" },
  );

function velocityLimit(w: z.infer<typeof VelocityWindow> | undefined): VelocityLimit | undefined {
  if (w === undefined) return undefined;
  return Object.freeze({
    ...(w.amount !== undefined && { amount: w.amount }),
    ...(w.count !== undefined && { count: w.count }),
  });
}

/** MONEYQ_VELOCITY_LIMITS (a JSON array, an entry per account and currency) and the funds retry. */
export function readOutflow(read: EnvReader, aliases: readonly string[]): OutflowConfig {
  const velocity = new Map<string, Map<string, CurrencyLimits>>();
  const variable = "MONEYQ_VELOCITY_LIMITS";
  const listed = read.text(variable);
  const entries =
    listed === undefined
      ? []
      : readJsonList(listed, variable, VelocityEntry, "velocity limits", read.issues);
  entries?.forEach((entry, index) => {
    const where = `${variable}[${index}]`;
    const byCurrency = velocity.get(entry.account) ?? new Map<string, CurrencyLimits>();
    if (!aliases.includes(entry.account))
      read.issues.push({
        variable: `${where}.account`,
        rule: `no account "${entry.account}" is configured`,
      });
    else if (byCurrency.has(entry.currency))
      read.issues.push({
        variable: `${where}.currency`,
        rule: `account "${entry.account}" has ${entry.currency} limits already`,
      });
    byCurrency.set(
      entry.currency,
      Object.freeze({
        perHour: velocityLimit(entry.perHour),
        perDay: velocityLimit(entry.perDay),
        perBeneficiaryPerDay: velocityLimit(entry.perBeneficiaryPerDay),
      }),
    );
    velocity.set(entry.account, byCurrency);
  });
  const funds = read.check(
    "MONEYQ_INSUFFICIENT_FUNDS",
    z.enum(["hold", "fail"], { error: "must be hold or fail" }),
    "hold",
  );
  return Object.freeze({
    velocity,
    fundsHold: funds === "hold",
    fundsRetryMs: offOrDuration(read, "MONEYQ_INSUFFICIENT_FUNDS_RETRY", "1s"),
  });
}
