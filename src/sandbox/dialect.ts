import type { OperationId } from "../contract/operations.js";
import { setAt, takeAt } from "../provider/paths.js";
import {
  ANSWER_OPERATIONS,
  type AnswerOperation,
  type AnswerPaths,
  DEFAULT_PROVIDER_PROFILE,
  LIST_OPERATIONS,
  type ListOperation,
  type ProviderProfile,
  RATE_OPERATIONS,
  type RateOperation,
} from "../provider/profile.js";
import { listItemPaths, statusMeaning } from "../provider/read-answer.js";

/**
 * How the sandbox shapes `data`: ours (the contract's), another provider's (described by a
 * profile), or the spec's minimum (an empty object: spec 2.1 shows no fields at all).
 */
export type SandboxDialect =
  | { readonly kind: "default" }
  | { readonly kind: "profile"; readonly profile: ProviderProfile }
  | { readonly kind: "spec-minimal" };

const FIAT_AMOUNTS = new Set([
  "amount",
  "fee",
  "convertedAmount",
  "availableBalance",
  "heldBalance",
]);
const TIMESTAMPS = new Set(["createdAt", "updatedAt", "expiresAt"]);
const isAnswerOperation = (id: string): id is AnswerOperation =>
  (ANSWER_OPERATIONS as readonly string[]).includes(id);

/**
 * The `data` of operation `id` in the dialect. A profile dialect moves the id, status, failure
 * reason, list items and rate to the profile's paths, speaks its status words, writes fiat
 * amounts as strings and timestamps as epoch seconds, and adds fields of its own.
 * `submission` marks a creating request's answer: it gets the first of the pending words, a
 * lookup the last, so a profile with two pending words shows an in-between status.
 */
export function inDialect(
  dialect: SandboxDialect,
  id: OperationId,
  data: unknown,
  submission: boolean,
): unknown {
  if (dialect.kind === "default") return data;
  if (dialect.kind === "spec-minimal") return {};
  const { profile } = dialect;
  const out = structuredClone(data) as Record<string, unknown>;
  if (isAnswerOperation(id)) return reshapeRecord(profile, id, out, submission);
  if (id in LIST_OPERATIONS) {
    const list = id as ListOperation;
    const items = takeAt(out, DEFAULT_PROVIDER_PROFILE.lists[list].items);
    const paths = listItemPaths(profile, list);
    const reshaped = Array.isArray(items)
      ? items.map((item) => reshapeRecord(profile, LIST_OPERATIONS[list], item, false, paths))
      : items;
    setAt(out, profile.lists[list].items, reshaped);
    return foreignFormats(out);
  }
  if ((RATE_OPERATIONS as readonly string[]).includes(id)) {
    const rate = id as RateOperation;
    setAt(out, profile.rates[rate].rate, takeAt(out, DEFAULT_PROVIDER_PROFILE.rates[rate].rate));
  }
  return foreignFormats(out);
}

/** A record at the profile's paths: its answer's, or (`theirs`) a list item's own. */
function reshapeRecord(
  profile: ProviderProfile,
  operation: AnswerOperation,
  record: Record<string, unknown>,
  submission: boolean,
  theirs: AnswerPaths = profile.answers[operation],
): Record<string, unknown> {
  const ours = DEFAULT_PROVIDER_PROFILE.answers[operation];
  const id = takeAt(record, ours.id);
  const status = takeAt(record, ours.status);
  const reason = takeAt(record, ours.failureReason);
  const out = foreignFormats(record);
  setAt(out, theirs.id, id);
  setAt(
    out,
    theirs.status,
    typeof status === "string" ? wordFor(profile, status, submission) : status,
  );
  setAt(out, theirs.failureReason, reason);
  return out;
}

/** The profile's word for one of our statuses; a status outside our lists stays as it is. */
function wordFor(profile: ProviderProfile, status: string, submission: boolean): string {
  const meaning = statusMeaning(DEFAULT_PROVIDER_PROFILE, status);
  if (meaning === "unknown") return status;
  const words = profile.statuses[meaning];
  if (meaning === "pending") return (submission ? words[0] : words[words.length - 1]) as string;
  const same = words.find((w) => w.toLowerCase() === status.toLowerCase());
  return same ?? (words[0] as string);
}

/** Fiat amounts as strings with two decimals, timestamps as epoch seconds, and an extra field. */
function foreignFormats(record: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { livemode: false };
  for (const [key, value] of Object.entries(record)) {
    if (FIAT_AMOUNTS.has(key) && typeof value === "number") out[key] = value.toFixed(2);
    else if (TIMESTAMPS.has(key) && typeof value === "string")
      out[key] = Math.floor(Date.parse(value) / 1000);
    else out[key] = value;
  }
  return out;
}
