import { readFileSync } from "node:fs";
import { validate } from "../contract/field-issues.js";
import {
  type AnswerOperation,
  LIST_OPERATIONS,
  type ListOperation,
  LOOKUP_OPERATIONS,
  type ProviderProfile,
} from "../provider/profile.js";
import { profileRequestIssues } from "../provider/requests.js";
import { JOB_KIND_NAMES, JOB_KINDS, type JobKind } from "../queues/job-kinds.js";
import { CliError } from "./cli-error.js";

/** A job's request: its path parameters, query and body, in moneyq's names. */
export interface KindRequest {
  readonly params?: Record<string, unknown>;
  readonly query?: Record<string, unknown>;
  readonly body?: unknown;
}

/** What a check covers: the job kinds the account uses, and a request of each to send. */
export interface CheckPlan {
  readonly kinds: readonly JobKind[];
  /** Each kind's smallest request: moneyq's own, or the --requests file's. */
  readonly requests: Readonly<Partial<Record<JobKind, KindRequest>>>;
}

/**
 * The smallest real request of each kind that needs nothing of the provider's: a kind that
 * names one of its resources (a sub-account, an offer, a payment link) has none, and takes one
 * from --requests.
 */
export const SMALLEST_REQUESTS: Readonly<Partial<Record<JobKind, KindRequest>>> = {
  "payout.bank": {
    body: {
      amount: 1,
      currency: "NGN",
      bankCode: "044",
      accountNumber: "0123456789",
      accountName: "moneyq provider check",
      bankName: "Access Bank",
    },
  },
  "payout.momo": {
    body: { amount: 1, currency: "KES", phoneNumber: "254700000000", network: "MPESA", iso2: "KE" },
  },
  "funding.wallet": { body: { amount: 1, currency: "NGN", paymentMethod: "BANK_TRANSFER" } },
  "wallet.create": { body: { currency: "NGN" } },
  "collection.virtual-account": { body: { amount: 1, validFor: 60 } },
};

/** What a kind without a request of its own must be given in --requests. */
export const NEEDS_OF_KIND: Readonly<Partial<Record<JobKind, string>>> = {
  "payout.stable": "its sub-account (params.subAccountId) and a toAddress",
  "exchange.order": "an offer of your provider's (params.offerId)",
  "exchange.payment-link-order": "an offer (params.offerId) and a payment link (query.token)",
};

/** `--kinds a,b`: job kinds, each checked against the table of kinds. */
export function kindsOf(flag: string | undefined): JobKind[] {
  if (flag === undefined) return [...JOB_KIND_NAMES];
  const kinds = flag
    .split(",")
    .map((k) => k.trim())
    .filter((k) => k !== "");
  const unknown = kinds.filter((k) => !(JOB_KIND_NAMES as readonly string[]).includes(k));
  if (kinds.length === 0 || unknown.length > 0)
    throw new CliError(`--kinds: must be job kinds among ${JOB_KIND_NAMES.join(", ")}`);
  return [...new Set(kinds)] as JobKind[];
}

/**
 * `--requests FILE`: a JSON object of job kind to request (`{ "payout.stable": { "params":
 * {...}, "body": {...} } }`), each checked as a job's request is at enqueue.
 */
export function requestsOf(
  file: string | undefined,
  profile: ProviderProfile,
): CheckPlan["requests"] {
  if (file === undefined) return SMALLEST_REQUESTS;
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new CliError(
      `--requests: cannot read a JSON document from ${file} (${(error as Error).message})`,
    );
  }
  if (json === null || typeof json !== "object" || Array.isArray(json))
    throw new CliError("--requests: must be a JSON object of job kind to request");
  const issues: string[] = [];
  const requests: Partial<Record<JobKind, KindRequest>> = { ...SMALLEST_REQUESTS };
  for (const [kind, request] of Object.entries(json)) {
    if (!(JOB_KIND_NAMES as readonly string[]).includes(kind)) {
      issues.push(`--requests: ${kind}: not a job kind (${JOB_KIND_NAMES.join(", ")})`);
      continue;
    }
    const spec = JOB_KINDS[kind as JobKind];
    const checked = validate(spec.request, request);
    const found = checked.success
      ? profileRequestIssues(profile, spec.operation, (request as KindRequest).body).map((i) => ({
          ...i,
          field: `body.${i.field}`,
        }))
      : checked.issues;
    for (const i of found) issues.push(`--requests: ${kind}.${i.field}: ${i.rule}`);
    if (found.length === 0) requests[kind as JobKind] = request as KindRequest;
  }
  if (issues.length > 0) throw new CliError(issues.join("\n"));
  return requests;
}

/** The lookup and list of a kind that is looked up, or undefined for a creation. */
export function lookupOf(
  kind: JobKind,
): { readonly lookup: AnswerOperation; readonly list: ListOperation } | undefined {
  const spec = JOB_KINDS[kind];
  if (spec.lookup === "none") return undefined;
  const lookup = LOOKUP_OPERATIONS[spec.lookup];
  const list = (Object.keys(LIST_OPERATIONS) as ListOperation[]).find(
    (l) => LIST_OPERATIONS[l] === lookup,
  ) as ListOperation;
  return { lookup, list };
}

/**
 * The entries the pipeline reads for `kinds`, by operation: a submission's id and status (it
 * is looked up by the id), its lookup's status, and its list's items, ids and statuses (read by
 * this check and by reconciliation). A creation without a key needs none: it succeeds with
 * whatever id it could read.
 */
export function neededEntries(kinds: readonly JobKind[]): Map<string, string[]> {
  const needed = new Map<string, string[]>();
  const add = (operation: string, ...fields: string[]) => {
    const entries = needed.get(operation) ?? [];
    for (const f of fields) {
      const entry = `${operation.startsWith("list") ? "lists" : "answers"}.${operation}.${f}`;
      if (!entries.includes(entry)) entries.push(entry);
    }
    needed.set(operation, entries);
  };
  for (const kind of kinds) {
    const looked = lookupOf(kind);
    if (looked === undefined) continue;
    add(JOB_KINDS[kind].operation, "id", "status");
    add(looked.lookup, "status");
    add(looked.list, "items", "id", "status");
  }
  return needed;
}

/** The lists whose items the kinds' lookups are found in, once each. */
export function listsOf(kinds: readonly JobKind[]): ListOperation[] {
  return [...new Set(kinds.map((k) => lookupOf(k)?.list).filter((l) => l !== undefined))];
}
