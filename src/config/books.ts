// The books after success: re-checks and the reconciliation sweep's period.
import { z } from "zod";
import { CONFIG_DEFAULTS } from "./defaults.js";
import type { EnvReader } from "./env-reader.js";

/** Books after success (docs/reconciliation.md). */
export interface BooksConfig {
  /** When a succeeded payout is looked up again, after its success (ms, rising); empty: never. */
  readonly recheckAfterMs: readonly number[];
  /** How often the service sweeps each account's provider transactions; undefined: never. */
  readonly reconcileEveryMs: number | undefined;
}

const DURATION_UNITS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** A duration such as `90s`, `1h` or `3d`, in ms; undefined when it is none. */
export function durationMs(text: string): number | undefined {
  const match = /^(\d{1,9})(ms|s|m|h|d)$/.exec(text.trim());
  return match ? Number(match[1]) * (DURATION_UNITS[match[2] as string] as number) : undefined;
}

export const DURATION_RULE = "a duration such as 90s, 15m, 1h or 3d";

/**
 * A variable that is `off` (its default) or one duration of at least `least` (as written, such
 * as `1m`): the duration in ms, or undefined when off.
 */
export function offOrDuration(read: EnvReader, name: string, least: string): number | undefined {
  const leastMs = durationMs(least) as number;
  const text = read.check(
    name,
    z.string().refine((t) => t === "off" || (durationMs(t) ?? 0) >= leastMs, {
      message: `must be off, or ${DURATION_RULE}, at least ${least}`,
    }),
    "off",
  );
  return text === "off" ? undefined : durationMs(text);
}

const durations = z.string().superRefine((text, ctx) => {
  if (text === "off") return;
  const ms = text.split(",").map(durationMs);
  if (ms.some((v) => v === undefined || v <= 0))
    ctx.addIssue({
      code: "custom",
      message: `must be off, or ${DURATION_RULE}, or several separated by commas`,
    });
  else if (ms.length > 10 || ms.some((v, i) => i > 0 && (v as number) <= (ms[i - 1] as number)))
    ctx.addIssue({ code: "custom", message: "must rise, at most 10 of them" });
});

/** MONEYQ_RECHECK_AFTER and MONEYQ_RECONCILE_EVERY. */
export function readBooks(read: EnvReader): BooksConfig {
  const recheck = read.check(
    "MONEYQ_RECHECK_AFTER",
    durations,
    CONFIG_DEFAULTS.MONEYQ_RECHECK_AFTER,
  );
  return Object.freeze({
    recheckAfterMs: Object.freeze(
      recheck === "off" ? [] : recheck.split(",").map((t) => durationMs(t) as number),
    ),
    reconcileEveryMs: offOrDuration(read, "MONEYQ_RECONCILE_EVERY", "1m"),
  });
}
