// "Paystream": an independent fake of the Payments, Wallets and Exchange API, written only from
// the spec (/work/shared/spec/payments-api-v1.md) and a dialect of its own (snake_case records,
// lowercase states, `asset`/`chain`, validFor in seconds, its own list queries and refusals).
// It shares no code with moneyq's sandbox or provider profiles on purpose: moneyq is proven
// against something its own contract did not shape. Node built-ins only.
//
//   node test/helpers/foreign-provider.mjs [--port 0] [--rate-limit N] [--api-key KEY]...
//     [--settle-ms MS] [--process-ms MS]
//
// Prints one JSON line ({"baseUrl","controlUrl"}) once listening; SIGTERM closes it (exit 0).
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";

const FIRST_ID = 104882700;
const MAX_AMOUNT = 1_000_000_000;
const MAX_BODY_BYTES = 1024 * 1024;
// Strings the spec leaves unbounded (bankCode, network, path ids, ...) still get a bound:
// every input is hostile until checked.
const MAX_TEXT = 255;
const MAX_VALID_FOR_SECONDS = 365 * 24 * 3600;
const RATE = "1523.40";
const STARTING_BALANCE = "1000.00";

const words = (text) => text.split(" ");
// Set 2.2 of the spec, and 2.3's payment methods.
const CURRENCIES = words(
  "NGN USD EUR GBP CAD CNY INR GHS XOF USDT BUSD USDC CNGN XAF CDF KES MWK RWF TZS UGX ZMW SLE " +
    "ETB MAD ZAR",
);
const RATE_CURRENCIES = CURRENCIES.filter((c) => c !== "SLE");
const FUNDING_METHODS = words("CARD WALLET BANK_TRANSFER MOBILE_MONEY BANK_ACCOUNT");
const BUYER_METHODS = words(
  "CARD WALLET BANK_TRANSFER MOBILE_MONEY INTERAC ZELLE STABLE_CURRENCY ALIPAY WECHAT_PAY",
);
const ASSETS = ["USDT", "USDC"];
const CHAINS = ["polygon", "arbitrum", "base", "solana"];
const STATES = ["processing", "completed", "failed", "reversed"];
const TRANSFER_KINDS = ["bank_transfer", "mobile_money", "funding"];
const ORDER_KINDS = ["exchange_order", "payment_link_order"];

const USAGE =
  "usage: node test/helpers/foreign-provider.mjs [--port 0] [--rate-limit N] --api-key KEY " +
  "[--api-key KEY]... [--settle-ms MS] [--process-ms MS]";

// ---------------------------------------------------------------------------------------------
// Options

class UsageError extends Error {}

/** Reads the command line; a wrong flag is a UsageError naming it (exit 2, no stack trace). */
function parseOptions(argv) {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: "string", default: "0" },
        "rate-limit": { type: "string", default: "50" },
        "api-key": { type: "string", multiple: true, default: [] },
        "settle-ms": { type: "string", default: "1000" },
        "process-ms": { type: "string", default: "20" },
      },
    }));
  } catch (error) {
    throw new UsageError(error.message);
  }
  const apiKeys = [...new Set(values["api-key"])];
  if (apiKeys.length === 0) throw new UsageError("--api-key: at least one is required");
  if (apiKeys.some((key) => key.length === 0)) throw new UsageError("--api-key: must not be empty");
  return Object.freeze({
    port: integerFlag("--port", values.port, 0, 65535),
    rateLimit: integerFlag("--rate-limit", values["rate-limit"], 1, 1_000_000),
    settleMs: integerFlag("--settle-ms", values["settle-ms"], 0, 86_400_000),
    processMs: integerFlag("--process-ms", values["process-ms"], 0, 60_000),
    apiKeys: Object.freeze(apiKeys),
  });
}

function integerFlag(name, text, min, max) {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) {
    throw new UsageError(`${name}: must be an integer from ${min} to ${max} (got "${text}")`);
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// State: one object, replaced whole by a reset. A request keeps the object it started with, so
// one still processing across a reset writes into the discarded state, never into the new one.

function freshState() {
  return { nextId: FIRST_ID, nextSeq: 1, merchants: new Map(), windows: new Map(), requests: [] };
}

function merchantState(state, merchant) {
  let books = state.merchants.get(merchant);
  if (!books) {
    books = { records: new Map(), wallets: [], virtualAccounts: [], idempotency: new Map() };
    state.merchants.set(merchant, books);
  }
  return books;
}

// ---------------------------------------------------------------------------------------------
// Answers: plain objects ({ status, body } or { status, html }, with optional headers), all
// written by `send`, so that a merchant's request is logged with the status it really got.

const ok = (message, data) => ({ status: 200, body: { success: true, message, data } });
const refuse = (status, message) => ({ status, body: { success: false, message } });
const notFound = (message = "Not found") => refuse(404, message);

// ---------------------------------------------------------------------------------------------
// Validation: each check returns what is wrong with a value, or null.

function decimalsOf(value) {
  const text = String(value);
  if (/e/i.test(text)) return Number.POSITIVE_INFINITY;
  return text.split(".")[1]?.length ?? 0;
}

function positiveNumber(value) {
  if (typeof value !== "number" || !Number.isFinite(value)) return "must be a number";
  return value > 0 ? null : "must be greater than 0";
}

/** A fiat amount: recorded as a 2-decimal string, so a third decimal would be a silent rounding. */
function fiatAmount(value) {
  const wrong = positiveNumber(value);
  if (wrong) return wrong;
  if (value > MAX_AMOUNT) return `must be at most ${MAX_AMOUNT}`;
  return decimalsOf(value) > 2 ? "must have at most 2 decimal places" : null;
}

/** A string of `min` to `max` characters (code points, not UTF-16 units). */
function text({ min = 1, max = MAX_TEXT } = {}) {
  let rule = `${min} to ${max} characters`;
  if (min === max) rule = `exactly ${min} characters`;
  else if (min <= 1) rule = `at most ${max} characters`;
  return (value) => {
    if (typeof value !== "string") return "must be a string";
    const length = [...value].length;
    if (length === 0 && min === 1) return "must not be empty";
    return length < min || length > max ? `must be ${rule}` : null;
  };
}

function oneOf(values) {
  return (value) => (values.includes(value) ? null : `must be one of ${values.join(", ")}`);
}

function matching(pattern) {
  return (value) => {
    if (typeof value !== "string") return "must be a string";
    return pattern.test(value) ? null : `must match ${pattern.source}`;
  };
}

/** A decimal amount written as text (stable amounts, the rate lookup's query). */
function amountText(value) {
  const wrong = matching(/^\d+(\.\d+)?$/)(value);
  if (wrong) return wrong;
  if (value.length > 40) return "must be at most 40 characters";
  return Number(value) > 0 ? null : "must be greater than 0";
}

function jsonObject(value) {
  const isObject = typeof value === "object" && value !== null && !Array.isArray(value);
  return isObject ? null : "must be a JSON object";
}

function own(source, name) {
  return Object.hasOwn(source, name) ? source[name] : undefined;
}

/**
 * The first thing wrong with `source` as "field: rule", or null. `fields` lists
 * [name, check, required] in the order they are checked.
 */
function firstProblem(source, fields) {
  for (const [name, check, required] of fields) {
    const value = own(source, name);
    if (value === undefined) {
      if (required) return `${name}: required`;
      continue;
    }
    const wrong = check(value);
    if (wrong) return `${name}: ${wrong}`;
  }
  return null;
}

const REQUIRED = true;
const OPTIONAL = false;

const BANK_FIELDS = [
  ["amount", fiatAmount, REQUIRED],
  ["currency", oneOf(CURRENCIES), REQUIRED],
  ["bankCode", text(), REQUIRED],
  ["accountNumber", text({ max: 10 }), REQUIRED],
  ["accountName", text({ max: 100 }), REQUIRED],
  ["bankName", text({ max: 200 }), REQUIRED],
  ["iso2", text({ min: 2, max: 2 }), OPTIONAL],
  ["narration", text({ min: 0, max: 100 }), OPTIONAL],
];
const MOMO_FIELDS = [
  ["amount", fiatAmount, REQUIRED],
  ["currency", oneOf(CURRENCIES), REQUIRED],
  ["phoneNumber", text({ min: 10, max: 14 }), REQUIRED],
  ["network", text(), REQUIRED],
  ["iso2", text({ min: 2, max: 2 }), OPTIONAL],
  ["narration", text({ min: 0, max: 100 }), OPTIONAL],
];
const FUNDING_FIELDS = [
  ["amount", fiatAmount, REQUIRED],
  ["currency", oneOf(CURRENCIES), REQUIRED],
  ["paymentMethod", oneOf(FUNDING_METHODS), REQUIRED],
  ["iso2", text({ min: 2, max: 2 }), OPTIONAL],
  ["phoneNumber", text({ min: 8, max: 14 }), OPTIONAL],
  ["network", text(), OPTIONAL],
];
const STABLE_FIELDS = [
  ["amount", amountText, REQUIRED],
  ["toAddress", matching(/^T[1-9A-HJ-NP-Za-km-z]{33}$/), REQUIRED],
  ["asset", oneOf(ASSETS), REQUIRED],
  ["chain", oneOf(CHAINS), REQUIRED],
];
const ORDER_FIELDS = [
  ["amount", positiveNumber, REQUIRED],
  ["buyerDebitPaymentMethod", oneOf(BUYER_METHODS), REQUIRED],
  ["buyerCreditPaymentMethod", oneOf(BUYER_METHODS), REQUIRED],
  ["buyerCreditPaymentDetails", jsonObject, OPTIONAL],
  ["buyerDebitPaymentDetails", jsonObject, OPTIONAL],
];
const WALLET_FIELDS = [
  ["currency", oneOf(CURRENCIES), REQUIRED],
  ["bvn", text(), OPTIONAL],
  ["companyRegistrationNumber", text(), OPTIONAL],
];
const VIRTUAL_ACCOUNT_FIELDS = [
  ["amount", fiatAmount, REQUIRED],
  ["validFor", validForSeconds, REQUIRED],
];

function validForSeconds(value) {
  if (!Number.isInteger(value) || value < 1 || value > MAX_VALID_FOR_SECONDS) {
    return `must be a whole number of seconds from 1 to ${MAX_VALID_FOR_SECONDS}`;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Records and their timelines. A record's state is never stored as "current": it is read off
// its timeline at the moment of every read, so settling needs no timer.

function step(afterMs, state, failureReason = null) {
  return { afterMs, state, failureReason };
}

/** What a bank or mobile money transfer does, by the last character of its account. */
function transferOutcome(account, settleMs) {
  switch (account.at(-1)) {
    case "1":
      return { refusal: "Insufficient balance" };
    case "2":
      return { timeline: [step(0, "failed", "Beneficiary account closed")] };
    case "3":
      return { timeline: [step(0, "processing"), step(settleMs, "completed")] };
    case "4":
      return { timeline: [step(0, "completed")], failAfterCommit: true };
    case "5":
      return {
        timeline: [step(0, "processing"), step(settleMs, "failed", "Rejected by beneficiary bank")],
      };
    case "6":
      return {
        timeline: [
          step(0, "completed"),
          step(2 * settleMs, "reversed", "Returned by beneficiary bank"),
        ],
      };
    default:
      return { timeline: [step(0, "completed")] };
  }
}

function nextId(ctx) {
  const id = ctx.state.nextId;
  ctx.state.nextId += 1;
  return id;
}

function createRecord(ctx, kind, timeline, details) {
  const createdAtMs = Date.now();
  const record = {
    id: nextId(ctx),
    kind,
    merchant: ctx.merchant,
    reference: ctx.idempotencyKey,
    createdAtMs,
    timeline: timeline.map((s) => ({ ...s, atMs: createdAtMs + s.afterMs })),
    ...details,
  };
  ctx.books.records.set(record.id, record);
  return record;
}

/** The last step of the timeline that has begun by `nowMs`. */
function stepAt(record, nowMs) {
  let current = record.timeline[0];
  for (const s of record.timeline) if (s.atMs <= nowMs) current = s;
  return current;
}

const iso = (ms) => new Date(ms).toISOString();

function transferView(record, nowMs) {
  const now = stepAt(record, nowMs);
  return {
    id: record.id,
    state: now.state,
    kind: record.kind,
    amount: record.amount,
    currency: record.currency,
    reference: record.reference,
    failure_reason: now.failureReason,
    beneficiary: record.beneficiary,
    created_at: iso(record.createdAtMs),
    updated_at: iso(now.atMs),
  };
}

function stableView(record, nowMs) {
  const now = stepAt(record, nowMs);
  return {
    id: record.id,
    state: now.state,
    asset: record.asset,
    chain: record.chain,
    amount: record.amount,
    to_address: record.toAddress,
    sub_account_id: record.subAccountId,
    reference: record.reference,
    failure_reason: now.failureReason,
    created_at: iso(record.createdAtMs),
  };
}

function orderView(record, nowMs) {
  const now = stepAt(record, nowMs);
  return {
    id: record.id,
    state: now.state,
    offer_id: record.offerId,
    amount: record.amount,
    failure_reason: now.failureReason,
    reference: record.reference,
    created_at: iso(record.createdAtMs),
  };
}

function publicView(record, nowMs) {
  if (TRANSFER_KINDS.includes(record.kind)) return transferView(record, nowMs);
  if (record.kind === "stable_withdrawal") return stableView(record, nowMs);
  return orderView(record, nowMs);
}

// ---------------------------------------------------------------------------------------------
// Idempotent operations. `check` finds what is wrong with a request; `execute` runs it once it
// holds its key, returning { record, failAfterCommit? } or { refusal } (not stored).

const fiatTransfer = (body) => ({ amount: body.amount.toFixed(2), currency: body.currency });
const orNull = (value) => value ?? null;

const BANK_TRANSFER = {
  name: "bank_transfer",
  wrapper: "transfer",
  message: "Transfer accepted",
  check: ({ body }) => firstProblem(body, BANK_FIELDS),
  execute(ctx, { body }) {
    const outcome = transferOutcome(body.accountNumber, ctx.options.settleMs);
    if (outcome.refusal) return outcome;
    const beneficiary = {
      bank_code: body.bankCode,
      account_number: body.accountNumber,
      account_name: body.accountName,
      bank_name: body.bankName,
      iso2: orNull(body.iso2),
      narration: orNull(body.narration),
    };
    const record = createRecord(ctx, "bank_transfer", outcome.timeline, {
      ...fiatTransfer(body),
      beneficiary,
    });
    return { record, failAfterCommit: outcome.failAfterCommit === true };
  },
};

const MOMO_TRANSFER = {
  name: "mobile_money",
  wrapper: "transfer",
  message: "Transfer accepted",
  check: ({ body }) => firstProblem(body, MOMO_FIELDS),
  execute(ctx, { body }) {
    const outcome = transferOutcome(body.phoneNumber, ctx.options.settleMs);
    if (outcome.refusal) return outcome;
    const beneficiary = {
      phone_number: body.phoneNumber,
      network: body.network,
      iso2: orNull(body.iso2),
      narration: orNull(body.narration),
    };
    const record = createRecord(ctx, "mobile_money", outcome.timeline, {
      ...fiatTransfer(body),
      beneficiary,
    });
    return { record, failAfterCommit: outcome.failAfterCommit === true };
  },
};

const FUNDING = {
  name: "funding",
  wrapper: "transfer",
  message: "Transfer accepted",
  check: ({ body }) => firstProblem(body, FUNDING_FIELDS),
  execute(ctx, { body }) {
    const beneficiary = {
      payment_method: body.paymentMethod,
      phone_number: orNull(body.phoneNumber),
      network: orNull(body.network),
      iso2: orNull(body.iso2),
    };
    const record = createRecord(ctx, "funding", [step(0, "completed")], {
      ...fiatTransfer(body),
      beneficiary,
    });
    return { record };
  },
};

const STABLE_WITHDRAWAL = {
  name: "stable_withdrawal",
  wrapper: "transaction",
  message: "Withdrawal accepted",
  check: ({ body, params }) =>
    firstProblem(params, [["subAccountId", text(), REQUIRED]]) ?? firstProblem(body, STABLE_FIELDS),
  execute(ctx, { body, params }) {
    const timeline = [step(0, "processing"), step(ctx.options.settleMs, "completed")];
    const record = createRecord(ctx, "stable_withdrawal", timeline, {
      asset: body.asset,
      chain: body.chain,
      amount: body.amount,
      toAddress: body.toAddress,
      subAccountId: params.subAccountId,
    });
    return { record };
  },
};

/** Exchange orders (4.18, 4.19): an integer part ending in 2 is an offer that expires. */
function orderOperation(name, queryFields) {
  return {
    name,
    wrapper: "order",
    message: "Order accepted",
    check: ({ body, params, query }) =>
      firstProblem(params, [["offerId", text(), REQUIRED]]) ??
      firstProblem(query, queryFields) ??
      firstProblem(body, ORDER_FIELDS),
    execute(ctx, { body, params }) {
      const settleMs = ctx.options.settleMs;
      const expires = Math.trunc(body.amount) % 10 === 2;
      const settled = expires
        ? step(settleMs, "failed", "Offer expired")
        : step(settleMs, "completed");
      const record = createRecord(ctx, name, [step(0, "processing"), settled], {
        offerId: params.offerId,
        // An order's currency is the offer's, possibly a stable one: its amount stays as given.
        amount: String(body.amount),
      });
      return { record };
    },
  };
}

const EXCHANGE_ORDER = orderOperation("exchange_order", []);
const PAYMENT_LINK_ORDER = orderOperation("payment_link_order", [["token", text(), REQUIRED]]);

// ---------------------------------------------------------------------------------------------
// Idempotency: per merchant, key -> { pending, hash, recordId }.

/** JSON with object keys sorted at every level, so that key order never changes a hash. */
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const members = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`);
    return `{${members.join(",")}}`;
  }
  return JSON.stringify(value);
}

function requestHash(operation, input) {
  const text = canonical({ operation: operation.name, ...input });
  return createHash("sha256").update(text).digest("hex");
}

const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function accepted(operation, record) {
  return ok(operation.message, { [operation.wrapper]: publicView(record, Date.now()) });
}

const BAD_GATEWAY = { status: 502, html: "<html><body>502 Bad Gateway</body></html>" };

/**
 * Runs an idempotent create under its key: a replay answers the record as it is now; the
 * key is held while the create is processed (`--process-ms`, as a real provider's write
 * takes time), so a concurrent request with it gets a 409.
 */
async function runIdempotent(ctx, operation, input) {
  const store = ctx.books.idempotency;
  const key = ctx.idempotencyKey;
  const hash = requestHash(operation, input);
  const held = store.get(key);
  if (held?.pending) {
    return refuse(409, "A request with this idempotency key is still being processed");
  }
  if (held && held.hash !== hash) {
    return refuse(409, "Idempotency key already used with a different request");
  }
  if (held) return accepted(operation, ctx.books.records.get(held.recordId));

  store.set(key, { pending: true, hash });
  await delay(ctx.options.processMs);
  const outcome = operation.execute(ctx, input);
  if (outcome.refusal) {
    // A refusal that moved no money leaves the key free: a resend is processed anew.
    store.delete(key);
    return { status: 200, body: { success: false, message: outcome.refusal } };
  }
  store.set(key, { pending: false, hash, recordId: outcome.record.id });
  return outcome.failAfterCommit ? BAD_GATEWAY : accepted(operation, outcome.record);
}

const MISSING_KEY = refuse(400, "Missing idempotency key");

async function idempotentCreate(ctx, operation, input) {
  if (!ctx.idempotencyKey) return MISSING_KEY;
  if ([...ctx.idempotencyKey].length > MAX_TEXT) {
    return refuse(400, `idempotencykey: must be at most ${MAX_TEXT} characters`);
  }
  const problem = operation.check(input);
  if (problem) return refuse(400, problem);
  return runIdempotent(ctx, operation, input);
}

// ---------------------------------------------------------------------------------------------
// Creates without a key

function createWallet(ctx, { body }) {
  const problem = firstProblem(body, WALLET_FIELDS);
  if (problem) return refuse(400, problem);
  const wallet = { id: nextId(ctx), currency: body.currency, created_at: iso(Date.now()) };
  ctx.books.wallets.push(wallet);
  return ok("Wallet created", { wallet });
}

function createVirtualAccount(ctx, { body }) {
  const problem = firstProblem(body, VIRTUAL_ACCOUNT_FIELDS);
  if (problem) return refuse(400, problem);
  const id = nextId(ctx);
  const createdAtMs = Date.now();
  const virtualAccount = {
    id,
    // Derived from the id, so no two accounts of one server share a number.
    account_number: `99${String(id % 100_000_000).padStart(8, "0")}`,
    amount: body.amount.toFixed(2),
    expires_at: iso(createdAtMs + body.validFor * 1000),
  };
  ctx.books.virtualAccounts.push({ ...virtualAccount, created_at: iso(createdAtMs) });
  return ok("Virtual account created", { virtual_account: virtualAccount });
}

// ---------------------------------------------------------------------------------------------
// Reads

/** page (>= 1) and per_page (1..100, default 50), or what is wrong with them. */
function pageOf(query) {
  const page = query.page ?? "1";
  const perPage = query.per_page ?? "50";
  if (!/^\d{1,9}$/.test(page) || Number(page) < 1) {
    return { problem: "page: must be an integer of at least 1" };
  }
  if (!/^\d{1,3}$/.test(perPage) || Number(perPage) < 1 || Number(perPage) > 100) {
    return { problem: "per_page: must be an integer from 1 to 100" };
  }
  return { page: Number(page), perPage: Number(perPage) };
}

/** One page of `views`, newest first (ids grow with time). */
function pageAnswer(views, query) {
  const paging = pageOf(query);
  if (paging.problem) return refuse(400, paging.problem);
  const newestFirst = [...views].sort((a, b) => b.id - a.id);
  const start = (paging.page - 1) * paging.perPage;
  const items = newestFirst.slice(start, start + paging.perPage);
  const meta = { page: paging.page, per_page: paging.perPage, total: views.length };
  return ok("OK", { items, meta });
}

function viewsOf(ctx, kinds) {
  const nowMs = Date.now();
  return [...ctx.books.records.values()]
    .filter((r) => kinds.includes(r.kind))
    .map((r) => publicView(r, nowMs));
}

function isoTime(value) {
  const valid = /^\d{4}-\d{2}-\d{2}/.test(value) && !Number.isNaN(Date.parse(value));
  return valid ? null : "must be an ISO 8601 time";
}

const TRANSFER_FILTERS = [
  ["state", oneOf(STATES), OPTIONAL],
  ["currency", oneOf(CURRENCIES), OPTIONAL],
  ["since", isoTime, OPTIONAL],
  ["until", isoTime, OPTIONAL],
];

/** 4.11: since is inclusive and until exclusive, so consecutive windows never overlap. */
function listTransfers(ctx, { query }) {
  const problem = firstProblem(query, TRANSFER_FILTERS);
  if (problem) return refuse(400, problem);
  const since = query.since === undefined ? -Infinity : Date.parse(query.since);
  const until = query.until === undefined ? Infinity : Date.parse(query.until);
  const views = viewsOf(ctx, TRANSFER_KINDS).filter((v) => {
    const created = Date.parse(v.created_at);
    return (
      (query.state === undefined || v.state === query.state) &&
      (query.currency === undefined || v.currency === query.currency) &&
      created >= since &&
      created < until
    );
  });
  return pageAnswer(views, query);
}

function listStable(ctx, { query }) {
  const filters = [
    ["asset", oneOf(ASSETS), OPTIONAL],
    ["chain", oneOf(CHAINS), OPTIONAL],
  ];
  const problem = firstProblem(query, filters);
  if (problem) return refuse(400, problem);
  const views = viewsOf(ctx, ["stable_withdrawal"]).filter(
    (v) =>
      (query.asset === undefined || v.asset === query.asset) &&
      (query.chain === undefined || v.chain === query.chain),
  );
  return pageAnswer(views, query);
}

const listOrders = (ctx, { query }) => pageAnswer(viewsOf(ctx, ORDER_KINDS), query);

/** The merchant's record with this path id and one of `kinds`, or undefined. */
function findRecord(ctx, idText, kinds) {
  if (!/^\d{1,15}$/.test(idText)) return undefined;
  const record = ctx.books.records.get(Number(idText));
  return record && kinds.includes(record.kind) ? record : undefined;
}

function getTransfer(ctx, { params }) {
  const record = findRecord(ctx, params.transactionId, TRANSFER_KINDS);
  if (!record) return notFound("Transfer not found");
  return ok("OK", { transfer: publicView(record, Date.now()) });
}

function getStable(ctx, { params }) {
  const record = findRecord(ctx, params.transactionId, ["stable_withdrawal"]);
  if (!record || record.subAccountId !== params.subAccountId) {
    return notFound("Transaction not found");
  }
  return ok("OK", { transaction: publicView(record, Date.now()) });
}

function getOrder(ctx, { params }) {
  const record = findRecord(ctx, params.orderId, ORDER_KINDS);
  if (!record) return notFound("Order not found");
  return ok("OK", { order: publicView(record, Date.now()) });
}

/** Balances are fixed: this provider does not keep stable-currency books. */
function getBalance(_ctx, { params }) {
  const problem = firstProblem(params, [["subAccountId", text(), REQUIRED]]);
  if (problem) return refuse(400, problem);
  const balances = ASSETS.flatMap((asset) =>
    CHAINS.map((chain) => ({ asset, chain, available: STARTING_BALANCE })),
  );
  return ok("OK", { balances });
}

const RATE_QUERY = [
  ["fromCurrency", oneOf(RATE_CURRENCIES), REQUIRED],
  ["toCurrency", oneOf(RATE_CURRENCIES), REQUIRED],
  ["fromCurrencyIso2", text({ min: 4, max: 4 }), REQUIRED],
  ["toCurrencyIso2", text({ min: 4, max: 4 }), REQUIRED],
  ["amount", amountText, REQUIRED],
];

function exchangeRate(_ctx, { query }) {
  const problem = firstProblem(query, RATE_QUERY);
  if (problem) return refuse(400, problem);
  const quote = {
    rate: RATE,
    from: query.fromCurrency,
    to: query.toCurrency,
    amount: query.amount,
  };
  return ok("OK", { quote });
}

const paymentLinkRate = () => ok("OK", { quote: { rate: RATE } });

// ---------------------------------------------------------------------------------------------
// Routes (relative to /v1). Path parameters are captured in order, as named in `params`.

const idempotent = (operation) => (ctx, input) => idempotentCreate(ctx, operation, input);

const ROUTES = [
  ["POST", /^\/transaction\/transfer\/bank$/, [], idempotent(BANK_TRANSFER)],
  ["POST", /^\/transaction\/transfer\/momo$/, [], idempotent(MOMO_TRANSFER)],
  ["POST", /^\/transaction\/fund-wallet$/, [], idempotent(FUNDING)],
  [
    "POST",
    /^\/stable-currency\/sub-accounts\/([^/]+)\/withdraw$/,
    ["subAccountId"],
    idempotent(STABLE_WITHDRAWAL),
  ],
  ["POST", /^\/offer\/([^/]+)\/order$/, ["offerId"], idempotent(EXCHANGE_ORDER)],
  [
    "POST",
    /^\/offer\/([^/]+)\/payment-request\/order$/,
    ["offerId"],
    idempotent(PAYMENT_LINK_ORDER),
  ],
  ["POST", /^\/wallet$/, [], createWallet],
  ["POST", /^\/transaction\/collection\/virtual-account$/, [], createVirtualAccount],
  ["GET", /^\/transactions$/, [], listTransfers],
  ["GET", /^\/transactions\/([^/]+)$/, ["transactionId"], getTransfer],
  ["GET", /^\/stable-currency\/transactions$/, [], listStable],
  [
    "GET",
    /^\/stable-currency\/sub-accounts\/([^/]+)\/transaction\/([^/]+)$/,
    ["subAccountId", "transactionId"],
    getStable,
  ],
  ["GET", /^\/stable-currency\/sub-accounts\/([^/]+)\/balance$/, ["subAccountId"], getBalance],
  ["GET", /^\/order\/my-orders$/, [], listOrders],
  ["GET", /^\/order\/([^/]+)$/, ["orderId"], getOrder],
  ["GET", /^\/utility\/exchange-rate$/, [], exchangeRate],
  ["GET", /^\/utility\/payment-link-rate$/, [], paymentLinkRate],
];

/** The handler and path parameters for a request, or undefined (404). */
function route(method, path) {
  for (const [routeMethod, pattern, names, handler] of ROUTES) {
    const match = routeMethod === method ? pattern.exec(path) : null;
    if (!match) continue;
    const params = {};
    try {
      names.forEach((name, i) => {
        params[name] = decodeURIComponent(match[i + 1]);
      });
    } catch {
      return undefined; // a malformed %-escape names nothing here
    }
    return { handler, params };
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// HTTP plumbing

class BodyTooLarge extends Error {}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on("data", (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        req.removeAllListeners("data");
        req.resume();
        reject(new BodyTooLarge());
      } else chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** A POST's body as a JSON object, or the 400 that says why it is not one. */
function parseJsonObject(raw) {
  let body;
  try {
    body = JSON.parse(raw);
  } catch {
    return { problem: "body: must be valid JSON" };
  }
  return jsonObject(body) ? { problem: "body: must be a JSON object" } : { body };
}

/** Query parameters as an object (first value of each name); the prototype-free object keeps a
 *  parameter called `__proto__` an ordinary one. */
function queryOf(url) {
  const query = Object.create(null);
  for (const [name, value] of url.searchParams) if (!(name in query)) query[name] = value;
  return query;
}

/** Admits a request of `merchant` unless `limit` were already admitted in the last second. */
function admit(windows, merchant, limit) {
  const now = performance.now();
  const recent = (windows.get(merchant) ?? []).filter((t) => t > now - 1000);
  const admitted = recent.length < limit;
  if (admitted) recent.push(now);
  windows.set(merchant, recent);
  return admitted;
}

function headerText(req, name) {
  const value = req.headers[name];
  return typeof value === "string" && value.length > 0 ? value : null;
}

function send(res, answer) {
  if (res.headersSent || res.destroyed) return;
  const headers = { ...answer.headers };
  const isHtml = answer.html !== undefined;
  const payload = isHtml ? answer.html : JSON.stringify(answer.body);
  headers["content-type"] = isHtml ? "text/html; charset=utf-8" : "application/json; charset=utf-8";
  headers["content-length"] = Buffer.byteLength(payload);
  res.writeHead(answer.status, headers);
  res.end(payload);
}

/** The request target as a URL, or null when it is not an origin-form path. */
function urlOf(req) {
  try {
    return new URL(`http://127.0.0.1${req.url ?? "/"}`);
  } catch {
    return null;
  }
}

/** Everything a merchant's request goes through: key, rate, route, body, then its handler. */
async function answerProvider(req, url, exchange, app) {
  const merchant = app.merchants.get(headerText(req, "x-api-key") ?? "");
  if (merchant === undefined) return refuse(401, "Invalid API key");
  exchange.merchant = merchant;
  if (!admit(exchange.state.windows, merchant, app.options.rateLimit)) {
    return { ...refuse(429, "Too many requests"), headers: { "retry-after": "1" } };
  }
  const raw = await readBody(req);
  const path = url?.pathname ?? "";
  const found = path.startsWith("/v1/") ? route(req.method, path.slice(3)) : undefined;
  if (!found) return notFound();
  let body = null;
  if (req.method === "POST") {
    const parsed = parseJsonObject(raw);
    if (parsed.problem) return refuse(400, parsed.problem);
    body = parsed.body;
  }
  const ctx = {
    options: app.options,
    state: exchange.state,
    merchant,
    books: merchantState(exchange.state, merchant),
    idempotencyKey: exchange.idempotencyKey,
  };
  return found.handler(ctx, { body, params: found.params, query: queryOf(url) });
}

function unexpected(error) {
  if (error instanceof BodyTooLarge) {
    // The rest of the body is not read: the connection cannot be reused.
    return { ...refuse(413, "Request body too large"), headers: { connection: "close" } };
  }
  process.stderr.write(`foreign-provider: ${error?.stack ?? error}\n`);
  return refuse(500, "Internal error");
}

/** A merchant's request: answered, and logged with the status it was answered. */
async function handleProvider(req, res, url, app) {
  const state = app.state;
  const exchange = {
    seq: state.nextSeq,
    at: Date.now(),
    method: req.method,
    path: url?.pathname ?? req.url ?? "",
    idempotencyKey: headerText(req, "idempotencykey"),
    merchant: null,
    state,
  };
  state.nextSeq += 1;
  const answer = await answerProvider(req, url, exchange, app).catch(unexpected);
  const { seq, at, method, path, idempotencyKey, merchant } = exchange;
  state.requests.push({ seq, at, method, path, idempotencyKey, merchant, status: answer.status });
  send(res, answer);
}

// ---------------------------------------------------------------------------------------------
// Control API (no auth): what the tests read and reset. A merchant is named by its key's index
// in --api-key order, never by the key.

function controlState(state) {
  const nowMs = Date.now();
  const records = [];
  const wallets = [];
  const virtualAccounts = [];
  for (const [merchant, books] of state.merchants) {
    for (const record of books.records.values()) {
      const updatedAt = iso(stepAt(record, nowMs).atMs);
      records.push({
        merchant,
        kind: record.kind,
        ...publicView(record, nowMs),
        updated_at: updatedAt,
      });
    }
    wallets.push(...books.wallets.map((wallet) => ({ merchant, ...wallet })));
    virtualAccounts.push(...books.virtualAccounts.map((account) => ({ merchant, ...account })));
  }
  records.sort((a, b) => a.id - b.id);
  // Prototype-free: an idempotency key is any string, `__proto__` included.
  const effects = Object.create(null);
  for (const record of records) effects[record.reference] = (effects[record.reference] ?? 0) + 1;
  const requests = [...state.requests].sort((a, b) => a.seq - b.seq);
  return { records, effects, requests, wallets, virtualAccounts };
}

function answerControl(req, url, app) {
  if (req.method === "GET" && url.pathname === "/_control/state") {
    return { status: 200, body: controlState(app.state) };
  }
  if (req.method === "POST" && url.pathname === "/_control/reset") {
    app.state = freshState();
    return ok("Reset", {});
  }
  return notFound();
}

async function handle(req, res, app) {
  const url = urlOf(req);
  if (url && (url.pathname === "/_control" || url.pathname.startsWith("/_control/"))) {
    req.resume();
    send(res, answerControl(req, url, app));
    return;
  }
  await handleProvider(req, res, url, app);
}

// ---------------------------------------------------------------------------------------------
// Main

function optionsOrExit() {
  try {
    return parseOptions(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`foreign-provider: ${error.message}\n${USAGE}\n`);
    process.exit(2);
  }
}

function main() {
  const options = optionsOrExit();
  const app = {
    options,
    merchants: new Map(options.apiKeys.map((key, index) => [key, String(index)])),
    state: freshState(),
  };
  const server = createServer((req, res) => {
    handle(req, res, app).catch((error) => send(res, unexpected(error)));
  });
  server.on("error", (error) => {
    process.stderr.write(`foreign-provider: ${error.message}\n`);
    process.exit(1);
  });
  server.listen(options.port, "127.0.0.1", () => {
    const origin = `http://127.0.0.1:${server.address().port}`;
    const urls = { baseUrl: `${origin}/v1`, controlUrl: `${origin}/_control` };
    process.stdout.write(`${JSON.stringify(urls)}\n`);
  });
  const stop = () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
    // Whatever still holds the loop (a create in its processing delay) must not keep it alive.
    setTimeout(() => process.exit(0), 2000).unref();
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

main();
