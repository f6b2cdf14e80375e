import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/load-config.js";
import { classify } from "../../src/processors/classify.js";
import { readAnswer } from "../../src/processors/upstream-call.js";
import {
  DEFAULT_PROVIDER_PROFILE,
  type ProviderProfile,
  parseProviderProfile,
} from "../../src/provider/profile.js";
import { listItemPaths, readJobAnswer, statusMeaning } from "../../src/provider/read-answer.js";
import { translateRequest } from "../../src/provider/requests.js";
import type { EnqueueValidationError } from "../../src/queues/enqueue-error.js";
import type { JobInput } from "../../src/queues/job-envelope.js";
import { Producer } from "../../src/queues/producer.js";
import { inDialect } from "../../src/sandbox/dialect.js";
import { FOREIGN_PROFILE, profileFile, profileOf } from "../fixtures/provider-profiles.js";

const D = DEFAULT_PROVIDER_PROFILE;

describe("status words", () => {
  const caseSensitive = profileOf({ statuses: { caseSensitive: true } });
  it.each([
    [D, "SUCCESSFUL", "succeeded"],
    [D, "successful", "succeeded"],
    [D, "Completed", "succeeded"],
    [D, "PENDING", "pending"],
    [D, "FAILED", "failed"],
    [D, "cancelled", "failed"],
    [D, "DECLINED", "failed"],
    [D, "PROCESSING", "unknown"],
    [D, "REVERSED", "reversed"],
    [D, "RETURNED", "reversed"],
    [D, "CHARGEBACK", "unknown"],
    [caseSensitive, "SUCCESSFUL", "succeeded"],
    [caseSensitive, "successful", "unknown"],
    [FOREIGN_PROFILE, "PROCESSING", "pending"],
    [FOREIGN_PROFILE, "processing", "pending"],
  ] as [ProviderProfile, string, string][])("%#: %s means %s", (profile, word, meaning) => {
    expect(statusMeaning(profile, word)).toBe(meaning);
  });
});

describe("reading a job's answer", () => {
  const need = { id: true, status: true };
  it.each([
    ["our shape", D, { transactionId: "txn_1", status: "SUCCESSFUL" }, need, "succeeded", "txn_1"],
    ["a numeric id", D, { transactionId: 42, status: "PENDING" }, need, "pending", "42"],
    ["an unknown word", D, { transactionId: "t", status: "PROCESSING" }, need, "unknown", "t"],
    [
      "nested paths",
      profileOf({ answers: { withdrawToBank: { id: "result.ref", status: "result.state" } } }),
      { result: { ref: "r-9", state: "failed" } },
      need,
      "failed",
      "r-9",
    ],
    ["a lookup needs no id", D, { status: "SUCCESSFUL" }, { id: false, status: true }, "succeeded"],
    ["a creation needs nothing", D, {}, { id: false, status: false }, "succeeded"],
  ] as const)("%s", (_name, profile, data, needs, meaning, id?: string) => {
    const reading = readJobAnswer(profile, "withdrawToBank", data, needs);
    expect(reading).toMatchObject({ understood: true, meaning });
    expect(reading.fields.id).toBe(id);
  });

  it.each([
    ["no id", { status: "SUCCESSFUL" }, ["answers.withdrawToBank.id (transactionId)"]],
    ["no status", { transactionId: "t" }, ["answers.withdrawToBank.status (status)"]],
    [
      "an empty data",
      {},
      ["answers.withdrawToBank.id (transactionId)", "answers.withdrawToBank.status (status)"],
    ],
    [
      "an object where the id goes",
      { transactionId: { a: 1 }, status: "PENDING" },
      ["answers.withdrawToBank.id (transactionId)"],
    ],
    [
      "an empty status",
      { transactionId: "t", status: "" },
      ["answers.withdrawToBank.status (status)"],
    ],
  ])("names what it could not read: %s", (_name, data, unread) => {
    expect(readJobAnswer(D, "withdrawToBank", data, { id: true, status: true })).toMatchObject({
      understood: false,
      unread,
    });
  });
});

describe("what the pipeline does with a reading", () => {
  const ctx = { phase: "submit" as const, idempotent: true, lastAttempt: false, sentBefore: false };
  const read = (kind: "payout.bank" | "wallet.create", data: unknown, phase = ctx.phase) =>
    readAnswer(D, kind, phase as never, { message: "accepted", data });

  it("looks an unknown status up again, never fails it", () => {
    const r = read("payout.bank", { transactionId: "t", status: "ON_HOLD" });
    expect(r.outcome).toMatchObject({ type: "answer", state: "pending" });
    expect(r.upstreamStatus).toBe("ON_HOLD");
    expect(classify(r.outcome, ctx)).toEqual({ type: "confirm" });
  });

  it("fails a failed status with the provider's reason", () => {
    const r = read("payout.bank", {
      transactionId: "t",
      status: "FAILED",
      failureReason: "closed",
    });
    expect(classify(r.outcome, ctx)).toEqual({
      type: "fail",
      code: "upstream_failed",
      message: "closed",
    });
  });

  it("ends an unreadable answer at once, never resending it, and keeps its data", () => {
    const r = read("payout.bank", { ref: "x" });
    expect(r.upstreamData).toEqual({ ref: "x" });
    for (const lastAttempt of [false, true]) {
      const action = classify(r.outcome, { ...ctx, lastAttempt });
      expect(action).toMatchObject({ type: "needs_reconciliation", code: "unrecognised_answer" });
      expect((action as { message: string }).message).toContain('answered "accepted"');
      expect((action as { message: string }).message).toContain("answers.withdrawToBank.id");
    }
  });

  it("reads a lookup through the lookup operation's paths", () => {
    const profile = profileOf({ answers: { getTransaction: { status: "lookup.state" } } });
    const r = readAnswer(profile, "payout.bank", "confirm", {
      message: "ok",
      data: { lookup: { state: "successful" } },
    });
    expect(r.outcome).toMatchObject({ type: "answer", state: "succeeded" });
  });

  it("takes a creation's success:true as its success, with whatever id it can read", () => {
    expect(read("wallet.create", {})).toMatchObject({
      outcome: { type: "answer", state: "succeeded" },
      upstreamId: undefined,
    });
    expect(read("wallet.create", { walletId: "w1" }).upstreamId).toBe("w1");
  });
});

describe("a profile document", () => {
  it("overrides only what it names", () => {
    const p = profileOf({ answers: { withdrawToBank: { id: "id" } } });
    expect(p.answers.withdrawToBank).toEqual({
      id: "id",
      status: "status",
      failureReason: "failureReason",
    });
    expect(p.answers.fundWallet).toEqual(D.answers.fundWallet);
    expect(p.statuses).toEqual(D.statuses);
  });

  it.each([
    [{ answers: { withdrawToBank: { idd: "x" } } }, "answers.withdrawToBank.idd", "unknown field"],
    [{ answers: { withdrawToBank: { id: "a..b" } } }, "answers.withdrawToBank.id", "dotted path"],
    [{ statuses: { succeeded: [] } }, "statuses.succeeded", "at least 1 item"],
    [
      { statuses: { pending: ["done"], succeeded: ["DONE"] } },
      "statuses.pending[0]",
      "one meaning",
    ],
    [{ requests: { validForUnit: "days" } }, "requests.validForUnit", "must be one of"],
    [
      { requests: { stableWithdrawal: { currency: "x", network: "x" } } },
      "requests.stableWithdrawal",
      "two names",
    ],
    [{ apiKeyPattern: "([" }, "apiKeyPattern", "regular expression"],
    [{ colour: "blue" }, "colour", "unknown field"],
  ])("%#: refuses %j naming %s", (doc, field, rule) => {
    const parsed = parseProviderProfile(doc);
    expect(parsed.success).toBe(false);
    const issues = parsed.success ? [] : parsed.issues;
    expect(issues.find((i) => i.field === field)?.rule).toContain(rule);
  });
});

describe("refusal rules and list shapes", () => {
  it.each([
    [
      { inFlight: [{ statuses: [429] }] },
      "refusals.inFlight[0].statuses[0]",
      "not 401, 403 or 429",
    ],
    [
      { keyReused: [{ statuses: [503] }] },
      "refusals.keyReused[0].statuses[0]",
      "200 to 299 or 400 to 499",
    ],
    [{ keyReused: [{}] }, "refusals.keyReused[0]", "an empty rule would match every refusal"],
    [
      { insufficientFunds: [{ message: "(" }] },
      "refusals.insufficientFunds[0].message",
      "valid regular expression",
    ],
  ])("refuses the rule %j, naming it", (refusals, field, rule) => {
    const parsed = parseProviderProfile({ refusals });
    expect(parsed.success).toBe(false);
    const issue = !parsed.success ? parsed.issues.find((i) => i.field === field) : undefined;
    expect(issue?.rule).toContain(rule);
  });

  it("reads list items with the list's own paths, and the lookup's where it sets none", () => {
    const wrapped = profileOf({
      answers: { getTransaction: { id: "transfer.id", status: "transfer.state" } },
      lists: { listTransactions: { items: "items", id: "id" } },
    });
    expect(listItemPaths(wrapped, "listTransactions")).toEqual({
      id: "id",
      status: "transfer.state",
      failureReason: "failureReason",
      reversedBy: "reversedBy",
    });
    expect(listItemPaths(D, "listOrders")).toEqual({
      ...D.answers.getOrder,
      reversedBy: "reversedBy",
    });
  });

  it("the sandbox in such a dialect wraps its lookups and lists items at the list's own paths", () => {
    const wrapped = profileOf({
      answers: { getTransaction: { id: "transfer.id", status: "transfer.state" } },
      lists: { listTransactions: { items: "items", id: "id", status: "state" } },
    });
    const dialect = { kind: "profile", profile: wrapped } as const;
    const record = { transactionId: "t-1", status: "SUCCESSFUL" };
    expect(inDialect(dialect, "getTransaction", record, false)).toMatchObject({
      transfer: { id: "t-1", state: "SUCCESSFUL" },
    });
    const listed = inDialect(dialect, "listTransactions", { transactions: [record] }, false);
    expect(listed).toMatchObject({ items: [{ id: "t-1", state: "SUCCESSFUL" }] });
  });
});

describe("requests in the provider's names", () => {
  it.each([
    [
      "listTransactions",
      { query: { sortDirection: "asc", status: "PENDING" } },
      { query: { order: "asc", state: "PENDING" } },
    ],
    [
      "listStableTransactions",
      { query: { page: 2, pageSize: 10 } },
      { query: { pageNumber: 2, limit: 10 } },
    ],
    ["getPaymentLinkRate", { query: { fromCurrency: "USD" } }, { query: { from: "USD" } }],
    [
      "withdrawStable",
      { params: { subAccountId: "s" }, body: { amount: "1", currency: "USDT", network: "base" } },
      { params: { subAccountId: "s" }, body: { amount: "1", asset: "USDT", chain: "base" } },
    ],
    [
      "createVirtualAccount",
      { body: { amount: 5, validFor: 30 } },
      { body: { amount: 5, validFor: 1800 } },
    ],
    [
      "declinePaymentLink",
      { query: { token: "plink_1" }, body: { reason: "no" } },
      { query: {}, body: { reason: "no", paymentLinkToken: "plink_1" } },
    ],
  ] as const)("%s", (id, ours, theirs) => {
    expect(translateRequest(FOREIGN_PROFILE, id, ours)).toEqual(theirs);
    expect(translateRequest(FOREIGN_PROFILE, id, theirs, true)).toMatchObject(ours);
    expect(translateRequest(D, id, ours)).toEqual(ours);
  });
});

describe("MONEYQ_PROVIDER_PROFILE", () => {
  const base = { PAYMENTS_API_URL: "https://api.example.test/v1", PAYMENTS_API_KEY: "k" };
  const issuesOf = (env: Record<string, string>) => {
    try {
      loadConfig(env);
    } catch (error) {
      if (error instanceof ConfigError) return error.issues;
      throw error;
    }
    return [];
  };

  it("loads a profile file once, laid over the default", () => {
    const config = loadConfig({
      ...base,
      MONEYQ_PROVIDER_PROFILE: profileFile({ statuses: { pending: ["PROCESSING"] } }),
    });
    expect(config.provider.statuses.pending).toEqual(["PROCESSING"]);
    expect(loadConfig(base).provider).toBe(D);
  });

  it("fails start naming the field and the rule", () => {
    expect(
      issuesOf({ ...base, MONEYQ_PROVIDER_PROFILE: profileFile({ statuses: { failed: [] } }) }),
    ).toEqual([{ variable: "MONEYQ_PROVIDER_PROFILE", rule: "statuses.failed: at least 1 item" }]);
    expect(issuesOf({ ...base, MONEYQ_PROVIDER_PROFILE: "/nonexistent/profile.json" })).toEqual([
      { variable: "MONEYQ_PROVIDER_PROFILE", rule: "cannot read the file (ENOENT)" },
    ]);
  });

  it("takes any key the spec allows, and checks the profile's own rule", () => {
    expect(loadConfig(base).accounts[0]?.apiKey).toBe("k");
    expect(issuesOf({ ...base, PAYMENTS_API_KEY: "a\u0007b" })[0]?.variable).toBe(
      "PAYMENTS_API_KEY",
    );
    const strict = profileFile({ apiKeyPattern: "^sk_(live|test)_" });
    expect(issuesOf({ ...base, MONEYQ_PROVIDER_PROFILE: strict })).toEqual([
      { variable: "PAYMENTS_API_KEY", rule: "must match the provider profile's apiKeyPattern" },
    ]);
    expect(
      loadConfig({ ...base, PAYMENTS_API_KEY: "sk_live_x", MONEYQ_PROVIDER_PROFILE: strict })
        .accounts,
    ).toHaveLength(1);
  });
});

describe("body fields the spec does not require (4.2, 4.4, 4.5, 4.6)", () => {
  const producer = (profile?: ProviderProfile) =>
    new Producer({
      // envelopeOf validates only; a connection that never connects is enough.
      connection: new Redis({ lazyConnect: true }),
      prefix: "unused",
      accounts: ["default"],
      maxAttempts: 1,
      retentionMs: 1,
      ...(profile && { profile }),
    });
  const momo = (body: Record<string, unknown>): JobInput => ({
    kind: "payout.momo",
    account: "default",
    idempotencyKey: "k",
    request: { body: body as never },
  });
  const refusal = (p: Producer, job: JobInput) => {
    try {
      p.envelopeOf(job);
      return undefined;
    } catch (error) {
      return (error as EnqueueValidationError).issues;
    }
  };
  const lenient = profileOf({
    requests: { required: { withdrawToMobileMoney: ["amount", "currency", "phoneNumber"] } },
  });

  it("refuses what the default profile requires, by name", () => {
    expect(
      refusal(producer(), momo({ amount: 5, currency: "KES", phoneNumber: "254712345678" })),
    ).toEqual([
      { field: "request.body.network", rule: "required" },
      { field: "request.body.iso2", rule: "required" },
    ]);
  });

  it("accepts what a provider does not require, and still checks what is given", () => {
    const p = producer(lenient);
    expect(
      refusal(p, momo({ amount: 5, currency: "KES", phoneNumber: "254712345678" })),
    ).toBeUndefined();
    expect(refusal(p, momo({ amount: 5, currency: "KES", phoneNumber: "12" }))).toEqual([
      { field: "request.body.phoneNumber", rule: "at least 10 characters" },
    ]);
  });

  it("refuses what a provider adds", () => {
    const strict = profileOf({ requests: { required: { createWallet: ["currency", "bvn"] } } });
    const wallet: JobInput = {
      kind: "wallet.create",
      account: "default",
      idempotencyKey: "w",
      request: { body: { currency: "NGN" } },
    };
    expect(refusal(producer(), wallet)).toBeUndefined();
    expect(refusal(producer(strict), wallet)).toEqual([
      { field: "request.body.bvn", rule: "required" },
    ]);
  });

  it("names only fields the body has", () => {
    const parsed = parseProviderProfile({ requests: { required: { createWallet: ["colour"] } } });
    expect(parsed.success ? [] : parsed.issues.map((i) => i.field)).toEqual([
      "requests.required.createWallet[0]",
    ]);
  });
});
