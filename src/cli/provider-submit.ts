import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { PaymentsRateLimitError } from "../client/errors.js";
import type { PaymentsClient } from "../client/payments-client.js";
import { transientFailure } from "../client/retry.js";
import {
  checkRecordAnswer,
  type OperationCheck,
  type Reader,
  unverifiedCheck,
} from "../provider/check-answer.js";
import type { AnswerOperation, ListOperation } from "../provider/profile.js";
import { readAnswerFields } from "../provider/read-answer.js";
import { likelyPaths } from "../provider/suggest-profile.js";
import { JOB_KINDS, type JobKind } from "../queues/job-kinds.js";
import { type CheckPlan, lookupOf, NEEDS_OF_KIND } from "./check-plan.js";
import { attempt, checkLists, checkLookup, type Send } from "./provider-check.js";

/** A 429's pause, or a passing failure's, waited out at most this long before the call gives up. */
const MAX_WAIT_MS = 10_000;
/** Sends of one call at most: a passing failure (5xx, timeout) is sent again with the same key. */
const MAX_SENDS = 4;

/**
 * Sends through `client` at most `perSecond` requests a second, one at a time; a 429 is waited
 * out (its Retry-After, up to 10 s) and a passing failure sent again after 1, 2, 4 s, with the
 * same input (and so the same idempotency key): the sandbox environment may limit or fail too.
 */
export function pacedSend(client: PaymentsClient, perSecond: number): Send {
  const interval = 1000 / perSecond;
  let next = 0;
  const paced = async () => {
    const wait = next - Date.now();
    next = Math.max(Date.now(), next) + interval;
    if (wait > 0) await sleep(wait);
  };
  return async (operation, input) => {
    for (let sends = 1; ; sends += 1) {
      await paced();
      try {
        return await client.send(operation, input as never);
      } catch (error) {
        const waitMs =
          error instanceof PaymentsRateLimitError
            ? Math.min(MAX_WAIT_MS, error.retryAfterMs ?? 1000)
            : transientFailure(error) !== undefined
              ? 1000 * 2 ** (sends - 1)
              : undefined;
        if (waitMs === undefined || sends >= MAX_SENDS) throw error;
        await sleep(waitMs);
      }
    }
  };
}

/** A submission the check made, to find in its list. */
interface Made {
  readonly kind: JobKind;
  readonly list: ListOperation;
  readonly id: string;
}

/**
 * The provider's id of a submission's answer: as the profile reads it, or (to look it up all
 * the same, when the profile cannot) where an id most likely is. The lookup's answer is real
 * either way; the submission's entry stays unreadable.
 */
function idToLookUp(reader: Reader, operation: AnswerOperation, data: unknown): string | undefined {
  const read = readAnswerFields(reader.profile, operation, data, reader.adapter).id;
  if (read !== undefined) return read;
  const likely = likelyPaths(data).id?.value;
  return typeof likely === "string" || typeof likely === "number" ? String(likely) : undefined;
}

/** Sends one smallest submission of `kind`, checks its answer, and looks it up. */
async function submitOne(
  reader: Reader,
  send: Send,
  kind: JobKind,
  plan: CheckPlan,
): Promise<{ checks: OperationCheck[]; made?: Made }> {
  const spec = JOB_KINDS[kind];
  const operation = spec.operation as AnswerOperation;
  const request = plan.requests[kind];
  if (request === undefined)
    return {
      checks: [
        unverifiedCheck(
          operation,
          `no ${kind} was sent: give one in --requests FILE, with ${NEEDS_OF_KIND[kind]}`,
        ),
      ],
    };
  const looked = lookupOf(kind);
  const input = spec.idempotent
    ? { ...request, idempotencyKey: `moneyq-check-${randomUUID()}` }
    : request;
  let data: unknown;
  const submitted = await attempt(operation, async () => {
    data = (await send(operation, input)).data;
    const needs = { id: looked !== undefined, status: looked !== undefined };
    return checkRecordAnswer(reader, operation, data, needs, looked ? [looked.list] : []);
  });
  if (looked === undefined || data === undefined) return { checks: [submitted] };
  const id = idToLookUp(reader, operation, data);
  if (id === undefined)
    return {
      checks: [
        submitted,
        unverifiedCheck(looked.lookup, `the ${kind}'s answer has no id to look up`),
      ],
    };
  const subAccountId = request.params?.subAccountId as string | undefined;
  const lookup = await checkLookup(reader, send, looked.lookup, id, subAccountId);
  return { checks: [submitted, lookup], made: { kind, list: looked.list, id } };
}

/**
 * `--submit`: one smallest real submission of each kind in the provider's sandbox environment,
 * each looked up and found in its list, every entry read on those real answers.
 */
export async function checkSubmissions(
  reader: Reader,
  send: Send,
  plan: CheckPlan,
): Promise<OperationCheck[]> {
  const checks: OperationCheck[] = [];
  const made: Made[] = [];
  for (const kind of plan.kinds) {
    const one = await submitOne(reader, send, kind, plan);
    checks.push(...one.checks);
    if (one.made) made.push(one.made);
  }
  const lists = [...new Set(made.map((m) => m.list))];
  for (const listCheck of await checkLists(reader, send, lists)) {
    const list = listCheck.operation as ListOperation;
    const items = "items" in listCheck ? listCheck.items : undefined;
    const lines = made
      .filter((m) => m.list === list && items !== undefined)
      .map((m) =>
        items?.some((i) => i.id === m.id)
          ? { found: `the check's ${m.kind} (${m.id}) is among its items` }
          : { missing: `the check's ${m.kind} (${m.id}) is not among its ${items?.length} items` },
      );
    checks.push({
      ...listCheck,
      found: [...listCheck.found, ...lines.flatMap((l) => ("found" in l ? [l.found] : []))],
      notVerified: [
        ...listCheck.notVerified,
        ...lines.flatMap((l) => ("missing" in l ? [l.missing] : [])),
      ],
    });
  }
  return checks;
}
