import {
  PaymentsAuthenticationError,
  PaymentsConnectionError,
  PaymentsError,
  PaymentsTimeoutError,
  PaymentsValidationError,
} from "../client/errors.js";
import type { EnvelopeAnswer } from "../client/payments-client.js";
import type { OperationId } from "../contract/operations.js";
import {
  checkListAnswer,
  checkRateAnswer,
  checkRecordAnswer,
  type ListCheck,
  type OperationCheck,
  type Reader,
  unverifiedCheck,
} from "../provider/check-answer.js";
import {
  type AnswerOperation,
  LIST_OPERATIONS,
  type ListOperation,
  RATE_OPERATIONS,
} from "../provider/profile.js";
import { ReadNotSentError } from "./check-gate.js";
import { type CheckPlan, listsOf } from "./check-plan.js";

/** Sends one operation of the check and returns its answer (gated, paced, saved: the caller's). */
export type Send = (operation: OperationId, input: unknown) => Promise<EnvelopeAnswer>;

export interface RateQuery {
  readonly fromCurrency: string;
  readonly toCurrency: string;
  readonly fromCurrencyIso2: string;
  readonly toCurrencyIso2: string;
  readonly amount: number;
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
    const read = error.code === "validation_error" ? "" : `, read as ${error.code}`;
    return `the provider refused the request (HTTP ${error.status}${read})${flags}: ${message}`;
  }
  if (error instanceof PaymentsError && error.code !== "invalid_response")
    return `the provider answered HTTP ${error.status ?? "?"}: ${message}`;
  return undefined;
}

/** Runs one call's check; a call that fails is not verified (or unreadable, when it is the answer). */
export async function attempt<C extends OperationCheck>(
  operation: OperationId,
  run: () => Promise<C>,
): Promise<C | OperationCheck> {
  try {
    return await run();
  } catch (error) {
    const because = unverifiedBecause(operation, error);
    if (because !== undefined) return unverifiedCheck(operation, because);
    const message = error instanceof Error ? error.message : String(error);
    return { ...unverifiedCheck(operation, ""), notVerified: [], problems: [message] };
  }
}

/** The exchange and payment link rates. */
export async function checkRates(
  reader: Reader,
  send: Send,
  rateQuery: RateQuery,
): Promise<OperationCheck[]> {
  const { amount, ...pair } = rateQuery;
  const queries = { getExchangeRate: rateQuery, getPaymentLinkRate: pair };
  const checks: OperationCheck[] = [];
  for (const rate of RATE_OPERATIONS)
    checks.push(
      await attempt(rate, async () =>
        checkRateAnswer(reader, rate, (await send(rate, { query: queries[rate] })).data),
      ),
    );
  return checks;
}

/** Each list: where its items are, and each item's id and status. */
export async function checkLists(
  reader: Reader,
  send: Send,
  lists: readonly ListOperation[],
): Promise<(ListCheck | OperationCheck)[]> {
  const checks: (ListCheck | OperationCheck)[] = [];
  for (const list of lists)
    checks.push(
      await attempt(list, async () => checkListAnswer(reader, list, (await send(list, {})).data)),
    );
  return checks;
}

/** A lookup's request for the provider's id (a stable transaction's needs its sub-account). */
export function lookupInput(
  lookup: AnswerOperation,
  id: string,
  subAccountId: string | undefined,
): unknown {
  if (lookup === "getOrder") return { params: { orderId: id } };
  if (lookup === "getStableTransaction") return { params: { subAccountId, transactionId: id } };
  return { params: { transactionId: id } };
}

/** Looks `id` up and checks the lookup's real answer: the status the pipeline reads. */
export function checkLookup(
  reader: Reader,
  send: Send,
  lookup: AnswerOperation,
  id: string,
  subAccountId: string | undefined,
): Promise<OperationCheck> {
  const lists = (Object.keys(LIST_OPERATIONS) as ListOperation[]).filter(
    (l) => LIST_OPERATIONS[l] === lookup,
  );
  return attempt(lookup, async () => {
    const answer = await send(lookup, lookupInput(lookup, id, subAccountId));
    return checkRecordAnswer(reader, lookup, answer.data, { id: false, status: true }, lists);
  });
}

const subAccountOf = (plan: CheckPlan): string | undefined => {
  const params = plan.requests["payout.stable"]?.params;
  const id = params?.subAccountId;
  return typeof id === "string" ? id : undefined;
};

/**
 * The check's reads, which never move money: the rates, each list the kinds need, and a lookup
 * of each list's first item, so that the lookup's paths are verified on a real lookup's answer.
 */
export async function checkReads(
  reader: Reader,
  send: Send,
  rateQuery: RateQuery,
  plan: CheckPlan,
): Promise<OperationCheck[]> {
  const checks = await checkRates(reader, send, rateQuery);
  for (const listCheck of await checkLists(reader, send, listsOf(plan.kinds))) {
    checks.push(listCheck);
    const list = listCheck.operation as ListOperation;
    const lookup = LIST_OPERATIONS[list];
    const item = "items" in listCheck ? listCheck.items.find((i) => i.id !== undefined) : undefined;
    if (item?.id === undefined) {
      checks.push(unverifiedCheck(lookup, `no item of ${list} with a readable id to look up`));
      continue;
    }
    const subAccountId = subAccountOf(plan);
    if (lookup === "getStableTransaction" && subAccountId === undefined) {
      checks.push(
        unverifiedCheck(
          lookup,
          "a stable transaction is looked up under its sub-account: give payout.stable's params.subAccountId in --requests FILE",
        ),
      );
      continue;
    }
    checks.push(await checkLookup(reader, send, lookup, item.id, subAccountId));
  }
  return checks;
}
