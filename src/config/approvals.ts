// Approval policies: which work of an account waits for a second person's approval.
import { z } from "zod";
import type { EnvReader } from "./env-reader.js";
import { readAccountPolicies } from "./json-lists.js";
import { amountsByCurrency } from "./rules.js";

/** Which batches of an account wait for a second person's approval before anything is sent. */
export interface ApprovalPolicy {
  /** Every batch. */
  readonly allBatches: boolean;
  /** A batch whose requested total in a currency is over that currency's amount (decimal text). */
  readonly batchesOver: Readonly<Record<string, string>>;
  /** A job enqueued alone whose amount in its currency is over that currency's amount. */
  readonly jobsOver: Readonly<Record<string, string>>;
  /** Work not decided this long after submission is cancelled; undefined: it waits. */
  readonly expiresAfterMs: number | undefined;
  /** A job resolved by hand needs a second person's approval (docs/reconciliation.md). */
  readonly resolutionsBySecondPerson?: boolean;
}

const ApprovalEntry = z
  .strictObject({
    account: z.string(),
    batches: z
      .literal("all", { error: 'must be "all" (or leave it out and give batchesOver)' })
      .optional(),
    batchesOver: amountsByCurrency.optional(),
    jobsOver: amountsByCurrency.optional(),
    expiresAfterMs: z
      .int()
      .min(1_000)
      .max(30 * 24 * 3_600_000)
      .optional(),
    resolutions: z
      .literal("second_person", { error: 'must be "second_person" (or leave it out)' })
      .optional(),
  })
  .refine(
    (a) =>
      a.batches !== undefined ||
      a.batchesOver !== undefined ||
      a.jobsOver !== undefined ||
      a.resolutions !== undefined,
    { message: "give batches, batchesOver, jobsOver or resolutions" },
  );

/** MONEYQ_APPROVAL_POLICIES: a JSON array, an entry per account that needs approvals. */
export function readApprovals(
  read: EnvReader,
  aliases: readonly string[],
): ReadonlyMap<string, ApprovalPolicy> {
  const list = {
    variable: "MONEYQ_APPROVAL_POLICIES",
    schema: ApprovalEntry,
    what: "approval policies",
  };
  return readAccountPolicies(read, aliases, list, (entry) =>
    Object.freeze({
      allBatches: entry.batches === "all",
      batchesOver: Object.freeze({ ...entry.batchesOver }),
      jobsOver: Object.freeze({ ...entry.jobsOver }),
      expiresAfterMs: entry.expiresAfterMs,
      resolutionsBySecondPerson: entry.resolutions === "second_person",
    }),
  );
}
