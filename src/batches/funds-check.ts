import type { BalanceReading, BalanceSource } from "../provider/read-balances.js";
import {
  decimalFromUnits,
  decimalsOf,
  decimalText,
  maxDecimalsOf,
  unitsOf,
} from "../queues/job-money.js";

/**
 * A dry run's comparison of what a batch sends from each stable sub-account with what the
 * provider reports available there (4.15, the only balance the spec shows). Only the amounts of
 * the rows count: the spec shows no fees.
 */

/** One sub-account, currency and network the batch sends from. */
export interface FundsLine {
  readonly subAccountId: string;
  /** Empty when the rows name none (the provider's default applies): not compared. */
  readonly currency: string;
  readonly network: string;
  readonly rows: number;
  /** What those rows send, summed exactly. */
  readonly needed: string;
  /** What the provider's answer says is available; absent when it was not read. */
  readonly available?: string | undefined;
  /** `enough` or `short` only from a balance read on the provider's answer. */
  readonly state: "enough" | "short" | "not_verified";
  /** How much is missing, when short. */
  readonly short?: string | undefined;
  /** Why it is not verified. */
  readonly why?: string | undefined;
}

export interface FundsReport {
  /** `short` when any line is; `enough` only when every line was read and is. */
  readonly state: "enough" | "short" | "not_verified";
  readonly lines: readonly FundsLine[];
}

/** A stable row's request, in moneyq's field names (batch-kinds.ts, `payout.stable`). */
interface StableRequest {
  readonly params?: { readonly subAccountId?: unknown };
  readonly body?: {
    readonly amount?: unknown;
    readonly currency?: unknown;
    readonly network?: unknown;
  };
}

/** At most this many sub-accounts are read for one dry run: each read takes a slot of the rate. */
export const MAX_FUNDS_READS = 20;

interface Need {
  readonly subAccountId: string;
  readonly currency: string;
  readonly network: string;
  rows: number;
  amounts: string[];
}

/** What the rows send, per sub-account, currency and network, in the rows' order. */
export function stableNeeds(requests: Iterable<unknown>): Need[] {
  const needs = new Map<string, Need>();
  for (const request of requests) {
    const { params, body } = request as StableRequest;
    const subAccountId = params?.subAccountId;
    const amount = decimalOf(body?.amount);
    if (typeof subAccountId !== "string" || amount === undefined) continue;
    const currency = typeof body?.currency === "string" ? body.currency.toUpperCase() : "";
    const network = typeof body?.network === "string" ? body.network.toLowerCase() : "";
    const key = JSON.stringify([subAccountId, currency, network]);
    const need = needs.get(key) ?? { subAccountId, currency, network, rows: 0, amounts: [] };
    need.rows += 1;
    need.amounts.push(amount);
    needs.set(key, need);
  }
  return [...needs.values()];
}

/** Reads each sub-account's balance once and compares every need with it. */
export async function checkFunds(
  account: string,
  needs: readonly Need[],
  read: BalanceSource | undefined,
): Promise<FundsReport> {
  const readings = new Map<string, BalanceReading>();
  for (const subAccountId of new Set(needs.map((n) => n.subAccountId))) {
    readings.set(
      subAccountId,
      read === undefined
        ? { read: false, why: "this moneyq process has no provider to ask" }
        : readings.size >= MAX_FUNDS_READS
          ? { read: false, why: `a dry run reads at most ${MAX_FUNDS_READS} sub-accounts` }
          : await read(account, subAccountId),
    );
  }
  const lines = needs.map((n) => compare(n, readings.get(n.subAccountId)));
  const state = lines.some((l) => l.state === "short")
    ? "short"
    : lines.every((l) => l.state === "enough")
      ? "enough"
      : "not_verified";
  return { state, lines };
}

function compare(need: Need, reading: BalanceReading | undefined): FundsLine {
  const { subAccountId, currency, network, rows } = need;
  const scale = maxDecimalsOf(need.amounts);
  const neededUnits = need.amounts.reduce((sum, a) => sum + unitsOf(a, scale), 0n);
  const head = {
    subAccountId,
    currency,
    network,
    rows,
    needed: decimalFromUnits(neededUnits, scale),
  };
  const unverified = (why: string): FundsLine => ({ ...head, state: "not_verified", why });
  if (currency === "" || network === "")
    return unverified("its rows name no currency or network: the provider's default applies");
  if (reading === undefined || !reading.read) return unverified(reading?.why ?? "not read");
  const line = reading.lines.find((l) => l.currency === currency && l.network === network);
  const available = line === undefined ? undefined : decimalOf(line.amount);
  if (available === undefined)
    return unverified(`the provider's answer has no readable ${currency} balance on ${network}`);
  const common = Math.max(scale, decimalsOf(available));
  const missing = unitsOf(head.needed, common) - unitsOf(available, common);
  return missing > 0n
    ? { ...head, available, state: "short", short: decimalFromUnits(missing, common) }
    : { ...head, available, state: "enough" };
}

const decimalOf = (value: unknown): string | undefined =>
  typeof value === "string" || typeof value === "number" ? decimalText(value) : undefined;
