import {
  PaymentsAuthenticationError,
  PaymentsConnectionError,
  PaymentsError,
  PaymentsTimeoutError,
  PaymentsValidationError,
} from "../client/errors.js";
import type { PaymentsClient } from "../client/payments-client.js";
import type { OperationId } from "../contract/operations.js";
import { valueAt } from "../provider/paths.js";
import {
  type AnswerOperation,
  LIST_OPERATIONS,
  type ListOperation,
  LOOKUP_OPERATIONS,
  type ProviderProfile,
  RATE_OPERATIONS,
  type RateOperation,
} from "../provider/profile.js";
import { readAnswerFields, statusMeaning } from "../provider/read-answer.js";
import { JOB_KINDS } from "../queues/job-kinds.js";
import { type Gated, ReadNotSentError } from "./check-gate.js";

/** What one read-only call showed about the profile. */
export interface OperationCheck {
  readonly operation: OperationId;
  /** Nothing in this answer contradicts the profile (see `notVerified` for what was not seen). */
  readonly understood: boolean;
  /** Fields found, as `entry (path) = value`. */
  readonly found: readonly string[];
  /** Entries that could not be read, as `entry (path): why`. */
  readonly problems: readonly string[];
  /**
   * Entries this check could not verify, and why: an empty list, a refused key, a provider out
   * of reach, a refused request. Not the profile's fault, but not a go-ahead either.
   */
  readonly notVerified: readonly string[];
  /** Readable, but worth a look (for example a status in none of the lists). */
  readonly warnings: readonly string[];
}

/** How a whole check ended, worst first. */
export type CheckVerdict = "unreadable" | "not_verified" | "ok";

export function verdictOf(checks: readonly OperationCheck[]): CheckVerdict {
  if (checks.some((c) => c.problems.length > 0)) return "unreadable";
  if (checks.some((c) => c.notVerified.length > 0)) return "not_verified";
  return "ok";
}

export interface RateQuery {
  readonly fromCurrency: string;
  readonly toCurrency: string;
  readonly fromCurrencyIso2: string;
  readonly toCurrencyIso2: string;
  readonly amount: number;
}

/** Items of a list looked at, so a long history costs no time. */
const ITEMS_CHECKED = 20;

const keysOf = (value: unknown): string =>
  value !== null && typeof value === "object" && !Array.isArray(value)
    ? Object.keys(value).join(", ") || "no fields"
    : typeof value;

/**
 * Calls the read-only operations (the exchange and payment link rates, the transaction,
 * stable transaction and order lists) and reads each answer through `profile`. Never sends a request that moves money.
 * Each request leaves through `gated` (the account's rate and pauses, check-gate.ts).
 */
export async function checkProvider(
  client: PaymentsClient,
  profile: ProviderProfile,
  rateQuery: RateQuery,
  gated: Gated,
): Promise<OperationCheck[]> {
  const checks: OperationCheck[] = [];
  const { amount, ...pair } = rateQuery;
  const rateQueries = { getExchangeRate: rateQuery, getPaymentLinkRate: pair };
  for (const rate of RATE_OPERATIONS) {
    checks.push(
      await attempt(rate, async () =>
        checkRate(
          profile,
          rate,
          (await gated(() => client.send(rate, { query: rateQueries[rate] as never }))).data,
        ),
      ),
    );
  }
  for (const list of Object.keys(LIST_OPERATIONS) as ListOperation[]) {
    checks.push(
      await attempt(list, async () =>
        checkList(profile, list, (await gated(() => client.send(list, {} as never))).data),
      ),
    );
  }
  return [...checks, ...checkSubmissions(profile, checks)];
}

/** Why a call brought nothing to check: the key, the network, the request; not the profile. */
function unverifiedBecause(operation: OperationId, error: unknown): string | undefined {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof ReadNotSentError) return message;
  if (error instanceof PaymentsAuthenticationError)
    return `the key was refused (HTTP ${error.status}): ${message}`;
  if (error instanceof PaymentsTimeoutError || error instanceof PaymentsConnectionError)
    return `the provider could not be reached: ${message}`;
  if (error instanceof PaymentsValidationError) {
    const flags = (RATE_OPERATIONS as readonly string[]).includes(operation)
      ? ": check --from, --to, --from-iso2, --to-iso2 and --amount"
      : "";
    return `the provider refused the request (HTTP ${error.status})${flags}: ${message}`;
  }
  if (error instanceof PaymentsError && error.code !== "invalid_response")
    return `the provider answered HTTP ${error.status ?? "?"}: ${message}`;
  return undefined;
}

async function attempt(
  operation: OperationId,
  run: () => Promise<OperationCheck>,
): Promise<OperationCheck> {
  try {
    return await run();
  } catch (error) {
    const because = unverifiedBecause(operation, error);
    const message = error instanceof Error ? error.message : String(error);
    return {
      operation,
      understood: because !== undefined,
      found: [],
      problems: because === undefined ? [message] : [],
      notVerified: because === undefined ? [] : [because],
      warnings: [],
    };
  }
}

const LIST_OF_LOOKUP = Object.fromEntries(
  Object.entries(LIST_OPERATIONS).map(([list, lookup]) => [lookup, list as ListOperation]),
) as Record<string, ListOperation>;

/**
 * Submission answers are never sent by this check (they move money). Their id and status
 * paths count as verified when they are the paths of their lookup, read from a list's item.
 */
function checkSubmissions(
  profile: ProviderProfile,
  checks: readonly OperationCheck[],
): OperationCheck[] {
  const out: OperationCheck[] = [];
  const seen = new Set<string>();
  for (const spec of Object.values(JOB_KINDS)) {
    if (spec.lookup === "none" || seen.has(spec.operation)) continue;
    seen.add(spec.operation);
    const operation = spec.operation as AnswerOperation;
    const lookup = LOOKUP_OPERATIONS[spec.lookup as keyof typeof LOOKUP_OPERATIONS];
    const list = LIST_OF_LOOKUP[lookup] as ListOperation;
    const ours = profile.answers[operation];
    const theirs = profile.answers[lookup];
    const listCheck = checks.find((c) => c.operation === list);
    const listVerified =
      listCheck !== undefined &&
      listCheck.problems.length === 0 &&
      listCheck.notVerified.length === 0;
    const entry = `answers.${operation}.id (${ours.id}) and .status (${ours.status})`;
    const samePaths = ours.id === theirs.id && ours.status === theirs.status;
    const verified = samePaths && listVerified;
    out.push({
      operation,
      understood: true,
      found: verified ? [`${entry}: the paths of answers.${lookup}, read in ${list}`] : [],
      problems: [],
      notVerified: verified
        ? []
        : [
            samePaths
              ? `${entry}: the paths of answers.${lookup}, which ${list} did not verify`
              : `${entry}: only a submission's answer shows them, and this check sends none`,
          ],
      warnings: [],
    });
  }
  return out;
}

function checkRate(
  profile: ProviderProfile,
  operation: RateOperation,
  data: unknown,
): OperationCheck {
  const path = profile.rates[operation].rate;
  const rate = valueAt(data, path);
  const numeric =
    typeof rate === "number" ||
    (typeof rate === "string" && rate.trim() !== "" && Number.isFinite(Number(rate)));
  return numeric
    ? {
        operation,
        understood: true,
        found: [`rates.${operation}.rate (${path}) = ${rate}`],
        problems: [],
        notVerified: [],
        warnings: [],
      }
    : {
        operation,
        understood: false,
        found: [],
        problems: [`rates.${operation}.rate (${path}): no number there; data has ${keysOf(data)}`],
        notVerified: [],
        warnings: [],
      };
}

function checkList(profile: ProviderProfile, list: ListOperation, data: unknown): OperationCheck {
  const itemsPath = profile.lists[list].items;
  const items = valueAt(data, itemsPath);
  if (!Array.isArray(items)) {
    return {
      operation: list,
      understood: false,
      found: [],
      problems: [`lists.${list}.items (${itemsPath}): no list there; data has ${keysOf(data)}`],
      notVerified: [],
      warnings: [],
    };
  }
  const found = [`lists.${list}.items (${itemsPath}): ${items.length} items`];
  const problems: string[] = [];
  const warnings: string[] = [];
  const notVerified: string[] = [];
  const lookup = LIST_OPERATIONS[list];
  const paths = profile.answers[lookup];
  if (items.length === 0)
    notVerified.push(
      `answers.${lookup}.id (${paths.id}) and .status (${paths.status}): no item in the list to read them from; check again once there is one`,
    );
  const unknown = new Set<string>();
  items.slice(0, ITEMS_CHECKED).forEach((item, i) => {
    const fields = readAnswerFields(profile, lookup, item);
    if (fields.id === undefined)
      problems.push(
        `answers.${lookup}.id (${paths.id}): not in item ${i}, which has ${keysOf(item)}`,
      );
    if (fields.status === undefined)
      problems.push(
        `answers.${lookup}.status (${paths.status}): not in item ${i}, which has ${keysOf(item)}`,
      );
    else if (statusMeaning(profile, fields.status) === "unknown") unknown.add(fields.status);
    if (i === 0 && fields.id !== undefined && fields.status !== undefined)
      found.push(
        `answers.${lookup}.id (${paths.id}) = ${fields.id}`,
        `answers.${lookup}.status (${paths.status}) = ${fields.status} (${statusMeaning(profile, fields.status)})`,
      );
  });
  for (const word of unknown)
    warnings.push(
      `status "${word}" is in none of the profile's lists: moneyq treats it as pending`,
    );
  return {
    operation: list,
    understood: problems.length === 0,
    found,
    problems,
    notVerified,
    warnings,
  };
}

/** The report as the CLI prints it: one block per operation. */
export function formatChecks(account: string, checks: readonly OperationCheck[]): string {
  const lines = [`account ${account}`];
  for (const c of checks) {
    const label = c.problems.length > 0 ? "FAIL" : c.notVerified.length > 0 ? "----" : "ok  ";
    lines.push(`  ${label} ${c.operation}`);
    for (const f of c.found) lines.push(`         found   ${f}`);
    for (const p of c.problems) lines.push(`         cannot read ${p}`);
    for (const n of c.notVerified) lines.push(`         not verified: ${n}`);
    for (const w of c.warnings) lines.push(`         warning ${w}`);
  }
  return `${lines.join("\n")}\n`;
}
