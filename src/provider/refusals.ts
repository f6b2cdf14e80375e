import {
  AdapterFailure,
  callAdapter,
  type ProviderAdapter,
  type Refusal,
  type RefusalKind,
} from "./adapter.js";
import { type ProviderProfile, patternOf, REFUSAL_MEANINGS, type RefusalRule } from "./profile.js";

const KINDS: ReadonlySet<string> = new Set([...REFUSAL_MEANINGS, "refused"]);

/**
 * Whether an answer with this status may be read as a refusal of some meaning: a 2xx carrying
 * the error envelope, or a 4xx but a refused key (401, 403) or a rate limit (429), whose
 * meanings are fixed. A 5xx never: its request may have had its effect.
 */
export function readableRefusal(status: number): boolean {
  if (status >= 200 && status <= 299) return true;
  return status >= 400 && status <= 499 && status !== 401 && status !== 403 && status !== 429;
}

/** A refusal's code and message as received, before redaction: compared, never kept. */
export interface RawRefusal {
  readonly code: string | undefined;
  readonly message: string | undefined;
}

function matches(rule: RefusalRule, refusal: Pick<Refusal, "status"> & RawRefusal): boolean {
  if (rule.statuses !== undefined && !rule.statuses.includes(refusal.status)) return false;
  if (
    rule.codes !== undefined &&
    (refusal.code === undefined || !rule.codes.includes(refusal.code))
  )
    return false;
  if (rule.message !== undefined) {
    const pattern = patternOf(rule.message);
    if (pattern === undefined || refusal.message === undefined) return false;
    if (!pattern.test(refusal.message)) return false;
  }
  return true;
}

/**
 * What a refusal means beyond its status: the adapter's word when it gives one, else the first
 * meaning (in REFUSAL_MEANINGS' order) one of whose profile rules matches. Undefined: none, and
 * the status alone decides (client/answer-error.ts). The adapter sees the refusal redacted; the
 * rules compare `raw` (as received) when given, so a key inside the code cannot hide it.
 */
export function refusalMeaning(
  profile: ProviderProfile,
  refusal: Refusal,
  adapter?: ProviderAdapter,
  raw: RawRefusal = refusal,
): RefusalKind | undefined {
  if (!readableRefusal(refusal.status)) return undefined;
  const said = callAdapter(adapter, "classifyRefusal", refusal);
  if (said !== undefined) {
    if (!KINDS.has(said as string))
      throw new AdapterFailure(
        "classifyRefusal",
        `answered ${JSON.stringify(said)}, which is no refusal kind`,
      );
    return said;
  }
  return REFUSAL_MEANINGS.find((meaning) =>
    profile.refusals[meaning].some((rule) => matches(rule, { status: refusal.status, ...raw })),
  );
}
