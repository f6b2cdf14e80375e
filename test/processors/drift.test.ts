import { describe, expect, it } from "vitest";
import {
  type BookedJob,
  judge,
  type ProviderRecord,
  type Verdict,
} from "../../src/processors/drift.js";

const record = (over: Partial<ProviderRecord> = {}): ProviderRecord => ({
  id: "txn_1",
  status: "SUCCESSFUL",
  meaning: "succeeded",
  type: "DEBIT",
  amount: "1500.00",
  currency: "NGN",
  ...over,
});
const job = (over: Partial<BookedJob> = {}): BookedJob => ({
  jobId: "j_1",
  result: "succeeded",
  money: { currency: "NGN", amount: "1500" },
  resolved: false,
  reversed: false,
  ...over,
});
const failed = { status: "FAILED", meaning: "failed" } as const;
const reversed = { meaning: "reversed", reversedBy: "txn_2" } as const;

const table: [string, ProviderRecord, BookedJob | undefined, Verdict][] = [
  ["both succeeded, the same money", record(), job(), {}],
  [
    "both succeeded, another amount",
    record({ amount: "1499.99" }),
    job(),
    { drift: "amount_differs" },
  ],
  [
    "both succeeded, another currency",
    record({ currency: "GHS" }),
    job(),
    { drift: "amount_differs" },
  ],
  ["the amount as a number's text, equal", record({ amount: "1500" }), job(), {}],
  [
    "no money known to moneyq: not compared",
    record({ amount: "1" }),
    job({ money: undefined }),
    {},
  ],
  [
    "moneyq failed, the provider succeeded",
    record(),
    job({ result: "failed" }),
    { drift: "provider_succeeded" },
  ],
  [
    "moneyq cancelled, the provider succeeded",
    record(),
    job({ result: "cancelled" }),
    { drift: "provider_succeeded" },
  ],
  [
    "left to reconciliation, the provider succeeded: resolved",
    record(),
    job({ result: "needs_reconciliation" }),
    { drift: "provider_succeeded", resolveTo: "succeeded" },
  ],
  [
    "left to reconciliation and resolved already: reported, not resolved again",
    record(),
    job({ result: "needs_reconciliation", resolved: true }),
    { drift: "provider_succeeded" },
  ],
  ["moneyq succeeded, the provider failed", record(failed), job(), { drift: "provider_failed" }],
  [
    "left to reconciliation, the provider failed: resolved, no drift",
    record(failed),
    job({ result: "needs_reconciliation" }),
    { resolveTo: "failed" },
  ],
  ["both failed", record(failed), job({ result: "failed" }), {}],
  [
    "moneyq succeeded, the provider reversed it: recorded",
    record(reversed),
    job(),
    { drift: "provider_failed", reverse: true },
  ],
  [
    "reversed, recorded already",
    record(reversed),
    job({ reversed: true }),
    { drift: "provider_failed" },
  ],
  [
    "still pending proves nothing",
    record({ status: "PENDING", meaning: "pending" }),
    job({ result: "needs_reconciliation" }),
    {},
  ],
  [
    "a word in no list proves nothing",
    record({ status: "ODD", meaning: "unknown" }),
    job({ result: "failed" }),
    {},
  ],
  ["a debit moneyq never sent", record(), undefined, { drift: "unknown_debit" }],
  [
    "a withdrawal moneyq never sent",
    record({ type: "WITHDRAWAL" }),
    undefined,
    { drift: "unknown_debit" },
  ],
  ["a credit is no debit", record({ type: "CREDIT" }), undefined, {}],
  ["a reversing transaction is money back", record({ reversalOf: "txn_0" }), undefined, {}],
  ["a failed debit moved nothing", record(failed), undefined, {}],
  [
    "a list without types: every record made counts",
    record({ type: undefined }),
    undefined,
    { drift: "unknown_debit" },
  ],
];

describe("a provider record against moneyq's books (one pure decision)", () => {
  it.each(table)("%s", (_name, r, j, verdict) => {
    expect(judge(r, j)).toEqual(verdict);
  });
});
