import { z } from "zod";
import { type FieldIssue, toFieldIssues } from "../contract/field-issues.js";
import { type OperationId, operations } from "../contract/operations.js";
import { FORBIDDEN_NAMES, pathProblem } from "./paths.js";

/** Operations whose answer tells the pipeline a job's fate: the id, status and failure reason. */
export const ANSWER_OPERATIONS = [
  "withdrawToBank",
  "withdrawToMobileMoney",
  "fundWallet",
  "withdrawStable",
  "createWallet",
  "createVirtualAccount",
  "createOrder",
  "createPaymentLinkOrder",
  "getTransaction",
  "getStableTransaction",
  "getOrder",
] as const;
export type AnswerOperation = (typeof ANSWER_OPERATIONS)[number];

/** The lookup of each job kind's `lookup` (queues/job-kinds.ts). */
export const LOOKUP_OPERATIONS = {
  transaction: "getTransaction",
  "stable-transaction": "getStableTransaction",
  order: "getOrder",
} as const satisfies Record<string, AnswerOperation>;

/** List operations, and the lookup whose field paths read each of their items. */
export const LIST_OPERATIONS = {
  listTransactions: "getTransaction",
  listStableTransactions: "getStableTransaction",
  listOrders: "getOrder",
} as const satisfies Record<string, AnswerOperation>;
export type ListOperation = keyof typeof LIST_OPERATIONS;

export const RATE_OPERATIONS = ["getExchangeRate", "getPaymentLinkRate"] as const;
export type RateOperation = (typeof RATE_OPERATIONS)[number];

/**
 * Query parameters whose names the spec leaves unshown (4.9, 4.11, 4.13), and the lists' time
 * window it does not name at all (`since`, `until` on 4.11, 4.13, 4.16), by our names.
 */
export const NAMED_QUERIES = {
  getPaymentLinkRate: ["fromCurrency", "toCurrency", "fromCurrencyIso2", "toCurrencyIso2"],
  listTransactions: ["sortDirection", "sortBy", "currency", "type", "status", "since", "until"],
  listStableTransactions: ["page", "pageSize", "currency", "network", "type", "since", "until"],
  listOrders: ["since", "until"],
} as const;
export type NamedQuery = keyof typeof NAMED_QUERIES;

/**
 * Bodies whose required fields the spec leaves unshown (4.2, 4.4, 4.5, 4.6), and their fields
 * by our names. The spec refuses none of them missing; a provider may require some.
 */
export const OPEN_BODIES = {
  withdrawToMobileMoney: ["amount", "currency", "phoneNumber", "network", "iso2", "narration"],
  withdrawStable: ["amount", "toAddress", "currency", "network"],
  createWallet: ["currency", "bvn", "companyRegistrationNumber"],
  createVirtualAccount: ["amount", "validFor"],
} as const;
export type OpenBody = keyof typeof OPEN_BODIES;

export const VALID_FOR_UNITS = ["seconds", "minutes", "hours"] as const;
export type ValidForUnit = (typeof VALID_FOR_UNITS)[number];

export interface AnswerPaths {
  readonly id: string;
  readonly status: string;
  readonly failureReason: string;
  /** Where a reversed record names the transaction that reverses it (a lookup's answer). */
  readonly reversedBy?: string | undefined;
}

/**
 * Where a list keeps its items, and where an item's id, status and failure reason sit: each
 * path left out is the lookup's (a provider that wraps a lookup's record may list bare ones).
 */
export interface ListShape {
  readonly items: string;
  readonly id?: string | undefined;
  readonly status?: string | undefined;
  readonly failureReason?: string | undefined;
  readonly reversedBy?: string | undefined;
  /** What reconciliation reads of an item besides its id and status (docs/reconciliation.md). */
  readonly reversalOf?: string | undefined;
  readonly reference?: string | undefined;
  readonly amount?: string | undefined;
  readonly currency?: string | undefined;
  readonly type?: string | undefined;
  readonly createdAt?: string | undefined;
}

/** The list item fields reconciliation reads, by name. */
export const LIST_ITEM_FIELDS = [
  "reversalOf",
  "reference",
  "amount",
  "currency",
  "type",
  "createdAt",
] as const;
export type ListItemField = (typeof LIST_ITEM_FIELDS)[number];

/** What a refusal may mean beyond its HTTP status, in the order the rules are tried. */
export const REFUSAL_MEANINGS = ["keyReused", "inFlight", "insufficientFunds"] as const;
export type RefusalMeaning = (typeof REFUSAL_MEANINGS)[number];

/**
 * One way a provider says a refusal's meaning: every part given must match (its HTTP status,
 * the envelope's `code`, its `message` against a case-insensitive regular expression).
 */
export interface RefusalRule {
  readonly statuses?: readonly number[] | undefined;
  readonly codes?: readonly string[] | undefined;
  readonly message?: string | undefined;
}

/**
 * Where a sub-account's balance answer (4.15) keeps its lines, and where each line's currency,
 * network and available amount sit: the spec does not show them.
 */
export interface BalanceShape {
  readonly items: string;
  readonly currency: string;
  readonly network: string;
  readonly amount: string;
}

/** Everything the spec leaves unshown that moneyq needs to talk to one provider. */
export interface ProviderProfile {
  readonly answers: Readonly<Record<AnswerOperation, AnswerPaths>>;
  readonly lists: Readonly<Record<ListOperation, ListShape>>;
  readonly rates: Readonly<Record<RateOperation, { readonly rate: string }>>;
  /** 4.15: where a sub-account's balances sit in its answer. */
  readonly balances: BalanceShape;
  readonly statuses: {
    readonly succeeded: readonly string[];
    readonly pending: readonly string[];
    readonly failed: readonly string[];
    /** Words of a payout that succeeded and was then reversed or returned. */
    readonly reversed: readonly string[];
    readonly caseSensitive: boolean;
  };
  /** What refusals mean beyond their status: each meaning's rules, any one of which matches. */
  readonly refusals: Readonly<Record<RefusalMeaning, readonly RefusalRule[]>>;
  readonly requests: {
    readonly query: Readonly<{ [Q in NamedQuery]: Readonly<Record<string, string>> }>;
    /** 4.4: names of the currency and network body fields. */
    readonly stableWithdrawal: { readonly currency: string; readonly network: string };
    /** 4.8: where the payment link's token goes. */
    readonly paymentLinkDecline: { readonly in: "query" | "body"; readonly name: string };
    /** 4.6: unit of `validFor` at the provider; callers always give minutes. */
    readonly validForUnit: ValidForUnit;
    /** 4.2, 4.4, 4.5, 4.6: body fields a job must carry (our names). */
    readonly required: Readonly<{ [B in OpenBody]: readonly string[] }>;
  };
  /** 5: extra rule of the provider's API keys, as a regular expression; none by default. */
  readonly apiKeyPattern: string | undefined;
}

const answer = (id: string): AnswerPaths => ({
  id,
  status: "status",
  failureReason: "failureReason",
});

/** What the sandbox's list items carry besides their id, status and reason. */
const SANDBOX_ITEM = {
  reversedBy: "reversedBy",
  reversalOf: "reversalOf",
  reference: "reference",
  amount: "amount",
  currency: "currency",
  type: "type",
  createdAt: "createdAt",
} as const;

/** The profile's lists of status words, each word in one only. */
export const STATUS_LISTS = ["succeeded", "pending", "failed", "reversed"] as const;

/** Today's choices, as the sandbox answers by default; a profile file overrides parts of it. */
export const DEFAULT_PROVIDER_PROFILE: ProviderProfile = deepFreeze({
  answers: {
    withdrawToBank: answer("transactionId"),
    withdrawToMobileMoney: answer("transactionId"),
    fundWallet: answer("transactionId"),
    withdrawStable: answer("transactionId"),
    createWallet: answer("walletId"),
    createVirtualAccount: answer("virtualAccountId"),
    createOrder: answer("orderId"),
    createPaymentLinkOrder: answer("orderId"),
    getTransaction: { ...answer("transactionId"), reversedBy: "reversedBy" },
    getStableTransaction: { ...answer("transactionId"), reversedBy: "reversedBy" },
    getOrder: answer("orderId"),
  },
  lists: {
    listTransactions: { items: "transactions", ...SANDBOX_ITEM },
    listStableTransactions: { items: "transactions", ...SANDBOX_ITEM },
    listOrders: { items: "orders", ...SANDBOX_ITEM, currency: "fromCurrency", type: undefined },
  },
  rates: { getExchangeRate: { rate: "rate" }, getPaymentLinkRate: { rate: "rate" } },
  balances: { items: "balances", currency: "currency", network: "network", amount: "balance" },
  statuses: {
    succeeded: ["SUCCESSFUL", "COMPLETED"],
    pending: ["PENDING"],
    failed: ["FAILED", "CANCELLED", "DECLINED"],
    reversed: ["REVERSED", "RETURNED"],
    caseSensitive: false,
  },
  // As the sandbox says them: a reused key by its code, whatever the status; a 409 in flight;
  // a 400 with code insufficient_funds.
  refusals: {
    keyReused: [{ codes: ["idempotency_key_reused"] }],
    inFlight: [{ statuses: [409] }],
    insufficientFunds: [{ statuses: [400], codes: ["insufficient_funds"] }],
  },
  requests: {
    query: Object.fromEntries(
      Object.entries(NAMED_QUERIES).map(([op, names]) => [
        op,
        Object.fromEntries(names.map((n) => [n, n])),
      ]),
    ) as ProviderProfile["requests"]["query"],
    stableWithdrawal: { currency: "currency", network: "network" },
    paymentLinkDecline: { in: "query", name: "token" },
    validForUnit: "minutes",
    required: {
      withdrawToMobileMoney: ["amount", "currency", "phoneNumber", "network", "iso2"],
      withdrawStable: ["amount", "toAddress", "currency", "network"],
      createWallet: ["currency"],
      createVirtualAccount: ["amount", "validFor"],
    },
  },
  apiKeyPattern: undefined,
});

const PATH_RULE = "must be a dotted path such as transactionId or result.id";
const path = z
  .string()
  .refine((v) => /^[^.\s]+(\.[^.\s]+)*$/.test(v) && !/[\p{Cc}]/u.test(v), { message: PATH_RULE })
  .superRefine((v, ctx) => {
    const problem = pathProblem(v);
    if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
  });
const NAME_RULE = "must be 1 to 64 characters without spaces";
const name = z
  .string()
  .refine((v) => /^\S{1,64}$/.test(v), { message: NAME_RULE })
  .refine((v) => !FORBIDDEN_NAMES.has(v), {
    message: "must not be __proto__, constructor or prototype",
  });
// Trimmed: "DONE " and "DONE" are one word, and " " none.
const word = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .refine((v) => !/\p{Cc}/u.test(v), { message: "must not contain control characters" });
const words = z.array(word).min(1).max(64);

/** Statuses whose meaning is fixed: a refusal rule never reads them otherwise. */
const FIXED_STATUSES: ReadonlySet<number> = new Set([401, 403, 429]);
const refusalStatus = z
  .number()
  .int()
  .refine((s) => ((s >= 200 && s <= 299) || (s >= 400 && s <= 499)) && !FIXED_STATUSES.has(s), {
    message:
      "must be 200 to 299 or 400 to 499, and not 401, 403 or 429 (their meaning is fixed: a refused key, a rate limit)",
  });
const MAX_PATTERN_CHARS = 200;
const RefusalRuleEntry = z
  .strictObject({
    statuses: z.array(refusalStatus).min(1).max(16).optional(),
    codes: z.array(word).min(1).max(16).optional(),
    message: z
      .string()
      .min(1)
      .max(MAX_PATTERN_CHARS)
      .refine(compiles, { message: "must be a valid regular expression" })
      .optional(),
  })
  .refine((r) => r.statuses !== undefined || r.codes !== undefined || r.message !== undefined, {
    message: "must give statuses, codes or message: an empty rule would match every refusal",
  });
const refusalRules = z.array(RefusalRuleEntry).max(16);

const fieldsOf = (body: OpenBody) => z.array(z.enum(OPEN_BODIES[body])).optional();

const AnswerEntry = z.strictObject({
  id: path.optional(),
  status: path.optional(),
  failureReason: path.optional(),
  reversedBy: path.optional(),
});
const record = <K extends string, S extends z.ZodType>(keys: readonly K[], schema: S) =>
  z.strictObject(
    Object.fromEntries(keys.map((k) => [k, schema.optional()])) as Record<K, z.ZodOptional<S>>,
  );

/** A profile file: every entry optional; what it leaves out keeps the default. */
export const ProviderProfileFile = z.strictObject({
  answers: record(ANSWER_OPERATIONS, AnswerEntry).optional(),
  lists: record(
    Object.keys(LIST_OPERATIONS) as ListOperation[],
    z.strictObject({
      items: path.optional(),
      id: path.optional(),
      status: path.optional(),
      failureReason: path.optional(),
      reversedBy: path.optional(),
      ...Object.fromEntries(LIST_ITEM_FIELDS.map((f) => [f, path.optional()])),
    }),
  ).optional(),
  rates: record(RATE_OPERATIONS, z.strictObject({ rate: path })).optional(),
  balances: z
    .strictObject({
      items: path.optional(),
      currency: path.optional(),
      network: path.optional(),
      amount: path.optional(),
    })
    .optional(),
  statuses: z
    .strictObject({
      succeeded: words.optional(),
      pending: words.optional(),
      failed: words.optional(),
      reversed: words.optional(),
      caseSensitive: z.boolean().optional(),
    })
    .optional(),
  refusals: record(REFUSAL_MEANINGS, refusalRules).optional(),
  requests: z
    .strictObject({
      query: z
        .strictObject({
          getPaymentLinkRate: record(NAMED_QUERIES.getPaymentLinkRate, name).optional(),
          listTransactions: record(NAMED_QUERIES.listTransactions, name).optional(),
          listStableTransactions: record(NAMED_QUERIES.listStableTransactions, name).optional(),
          listOrders: record(NAMED_QUERIES.listOrders, name).optional(),
        })
        .optional(),
      stableWithdrawal: z
        .strictObject({ currency: name.optional(), network: name.optional() })
        .optional(),
      paymentLinkDecline: z.strictObject({ in: z.enum(["query", "body"]), name: name }).optional(),
      validForUnit: z.enum(VALID_FOR_UNITS).optional(),
      required: z
        .strictObject({
          withdrawToMobileMoney: fieldsOf("withdrawToMobileMoney"),
          withdrawStable: fieldsOf("withdrawStable"),
          createWallet: fieldsOf("createWallet"),
          createVirtualAccount: fieldsOf("createVirtualAccount"),
        })
        .optional(),
    })
    .optional(),
  apiKeyPattern: z
    .string()
    .refine(compiles, { message: "must be a valid regular expression" })
    .optional(),
});

export type ParsedProfile =
  | { readonly success: true; readonly profile: ProviderProfile }
  | { readonly success: false; readonly issues: readonly FieldIssue[] };

/** Validates a profile document and lays it over the default. Issues name the field and the rule. */
export function parseProviderProfile(input: unknown): ParsedProfile {
  const parsed = ProviderProfileFile.safeParse(input);
  if (!parsed.success) return { success: false, issues: toFieldIssues(parsed.error.issues, input) };
  const profile = deepFreeze(merge(structuredClone(DEFAULT_PROVIDER_PROFILE), parsed.data));
  const issues = consistencyIssues(profile as ProviderProfile);
  return issues.length > 0
    ? { success: false, issues }
    : { success: true, profile: profile as ProviderProfile };
}

/** The status word as the profile compares it: trimmed, and lower-cased unless case matters. */
export function statusKey(profile: ProviderProfile, status: string): string {
  const word = status.trim();
  return profile.statuses.caseSensitive ? word : word.toLowerCase();
}

function consistencyIssues(profile: ProviderProfile): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const seen = new Map<string, string>();
  for (const list of STATUS_LISTS) {
    profile.statuses[list].forEach((w, i) => {
      const key = statusKey(profile, w);
      const other = seen.get(key);
      if (other !== undefined && other !== list)
        issues.push({
          field: `statuses.${list}[${i}]`,
          rule: `"${w}" is also in statuses.${other}; a status has one meaning`,
        });
      seen.set(key, list);
    });
  }
  for (const [op, names] of Object.entries(profile.requests.query)) {
    const values = Object.values(names);
    if (new Set(values).size !== values.length)
      issues.push({ field: `requests.query.${op}`, rule: "two parameters have the same name" });
  }
  const { currency, network } = profile.requests.stableWithdrawal;
  if (currency === network)
    issues.push({
      field: "requests.stableWithdrawal",
      rule: "currency and network need two names",
    });
  return [...issues, ...collisionIssues(profile)];
}

/** Our names of a request part's fields (a contract schema's shape). */
function fieldsOfPart(id: OperationId, part: "body" | "query"): string[] {
  const schema = (operations[id] as { body?: unknown; query?: unknown })[part];
  const shape = (schema as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape ? Object.keys(shape) : [];
}

/**
 * A provider name equal to a field the request keeps under its own name would overwrite it
 * (`stableWithdrawal.currency: "amount"` sends the currency as the amount).
 */
function collisionIssues(profile: ProviderProfile): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const check = (field: string, name: string, kept: readonly string[], where: string) => {
    if (kept.includes(name))
      issues.push({
        field,
        rule: `"${name}" is another field of the ${where}; it would be overwritten`,
      });
  };
  const renamed = profile.requests.stableWithdrawal;
  const keptStable = fieldsOfPart("withdrawStable", "body").filter((f) => !(f in renamed));
  for (const [ours, theirs] of Object.entries(renamed))
    check(`requests.stableWithdrawal.${ours}`, theirs, keptStable, "withdrawStable body");
  for (const [op, names] of Object.entries(profile.requests.query)) {
    const kept = fieldsOfPart(op as NamedQuery, "query").filter((f) => !(f in names));
    for (const [ours, theirs] of Object.entries(names))
      check(`requests.query.${op}.${ours}`, theirs, kept, `${op} query`);
  }
  const decline = profile.requests.paymentLinkDecline;
  const kept = fieldsOfPart("declinePaymentLink", decline.in).filter((f) => f !== "token");
  check("requests.paymentLinkDecline.name", decline.name, kept, `declinePaymentLink ${decline.in}`);
  return issues;
}

function compiles(pattern: string): boolean {
  return patternOf(pattern) !== undefined;
}

/** A refusal rule's message pattern as it is matched: case-insensitive, Unicode. */
export function patternOf(pattern: string): RegExp | undefined {
  try {
    return new RegExp(pattern, "iu");
  } catch {
    return undefined;
  }
}

function merge<T>(base: T, over: unknown): T {
  if (over === undefined) return base;
  if (over === null || typeof over !== "object" || Array.isArray(over)) return over as T;
  const out = { ...(base as Record<string, unknown>) };
  for (const [key, value] of Object.entries(over)) out[key] = merge(out[key], value);
  return out as T;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
