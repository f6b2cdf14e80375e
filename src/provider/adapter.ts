import type { OperationId } from "../contract/operations.js";
import { MoneyqError } from "../errors/moneyq-error.js";
import type { AnswerOperation, ListOperation, RateOperation, RefusalMeaning } from "./profile.js";
import type { RequestParts } from "./requests.js";

/** What one answer (or one list item) says of a transaction or order, as an adapter reads it. */
export interface AdapterFields {
  /** The provider's id: a string, or a whole number JavaScript holds exactly. */
  readonly id?: string | number | undefined;
  readonly status?: string | undefined;
  readonly failureReason?: string | undefined;
  /** The id of the transaction that reversed this one, where the provider names one. */
  readonly reversedBy?: string | number | undefined;
}

/** A refusal as the provider gave it, for an adapter to say what it means. */
export interface Refusal {
  readonly operation: OperationId;
  /** The HTTP status: a 4xx, or a 2xx whose body is the spec's error envelope. */
  readonly status: number;
  /** The envelope's `code`, when it had one (the spec gives none). */
  readonly code: string | undefined;
  /** The envelope's `message` (the API key redacted), when it had one. */
  readonly message: string | undefined;
}

/** What a refusal means: one of the profile's meanings, or a plain refusal (the job fails). */
export type RefusalKind = RefusalMeaning | "refused";

/**
 * Code for what a provider profile cannot say (docs/provider-profile.md, "An adapter"), the
 * default export or the named exports of the module `MONEYQ_PROVIDER_ADAPTER` names. Every
 * function is optional, and one that returns undefined leaves the answer to the profile. One
 * that throws, or returns what is not of these types, makes the answer unreadable: the job
 * goes to reconciliation, and nothing is sent again.
 */
export interface ProviderAdapter {
  /** A submission's or a lookup's `data`: the transaction's or order's id, status and reason. */
  readonly readAnswer?: (operation: AnswerOperation, data: unknown) => AdapterFields | undefined;
  /** Where a list answer's items are. */
  readonly listItems?: (list: ListOperation, data: unknown) => readonly unknown[] | undefined;
  /** One item of a list: its id, status and reason. */
  readonly readListItem?: (list: ListOperation, item: unknown) => AdapterFields | undefined;
  /** A rate lookup's rate (read by `moneyq provider check`). */
  readonly readRate?: (operation: RateOperation, data: unknown) => number | string | undefined;
  /** What a refusal means (insufficient funds, a reused key, a key still in flight). */
  readonly classifyRefusal?: (refusal: Refusal) => RefusalKind | undefined;
  /** A request in moneyq's names (the contract's) as the provider wants it. */
  readonly shapeRequest?: (
    operation: OperationId,
    request: RequestParts,
  ) => RequestParts | undefined;
}

/** The functions an adapter module may export. */
export const ADAPTER_FUNCTIONS = [
  "readAnswer",
  "listItems",
  "readListItem",
  "readRate",
  "classifyRefusal",
  "shapeRequest",
] as const satisfies readonly (keyof ProviderAdapter)[];

/** An adapter that went wrong: what it answered is not to be trusted. */
export class AdapterFailure extends MoneyqError {
  readonly code = "adapter_failed";
  constructor(fn: string, why: string) {
    super(`the provider adapter's ${fn} ${why}`);
  }
}

/**
 * Calls one of the adapter's functions: undefined when it has none or it leaves the answer to
 * the profile; an AdapterFailure when it throws.
 */
export function callAdapter<F extends keyof ProviderAdapter>(
  adapter: ProviderAdapter | undefined,
  fn: F,
  ...args: Parameters<NonNullable<ProviderAdapter[F]>>
): ReturnType<NonNullable<ProviderAdapter[F]>> | undefined {
  const f = adapter?.[fn] as ((...a: unknown[]) => unknown) | undefined;
  if (f === undefined) return undefined;
  try {
    return f(...args) as ReturnType<NonNullable<ProviderAdapter[F]>> | undefined;
  } catch (error) {
    throw new AdapterFailure(
      fn,
      `threw: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
