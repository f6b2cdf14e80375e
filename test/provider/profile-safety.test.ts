import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { setAt } from "../../src/provider/paths.js";
import { parseProviderProfile } from "../../src/provider/profile.js";
import { translateRequest } from "../../src/provider/requests.js";
import type { EnqueueValidationError } from "../../src/queues/enqueue-error.js";
import type { JobInput } from "../../src/queues/job-envelope.js";
import { Producer } from "../../src/queues/producer.js";
import { inDialect } from "../../src/sandbox/dialect.js";
import { profileOf } from "../fixtures/provider-profiles.js";

const issuesOf = (doc: unknown) => {
  const parsed = parseProviderProfile(doc);
  return parsed.success ? [] : parsed.issues;
};

describe("profile paths cannot reach a prototype", () => {
  it.each(["__proto__.polluted", "constructor.prototype.polluted", "data.__proto__", "prototype"])(
    "refuses %s, naming the entry and the rule",
    (path) => {
      expect(issuesOf({ answers: { withdrawToBank: { status: path } } })).toEqual([
        {
          field: "answers.withdrawToBank.status",
          rule: "must not use __proto__, constructor or prototype as a segment",
        },
      ]);
    },
  );

  it("refuses request names that reach a prototype", () => {
    expect(
      issuesOf({ requests: { paymentLinkDecline: { in: "body", name: "__proto__" } } }),
    ).toEqual([
      {
        field: "requests.paymentLinkDecline.name",
        rule: "must not be __proto__, constructor or prototype",
      },
    ]);
  });

  it("caps a path's length and its segments", () => {
    const deep = Array.from({ length: 9 }, (_, i) => `s${i}`).join(".");
    const long = "x".repeat(201);
    for (const path of [deep, long]) {
      expect(issuesOf({ lists: { listOrders: { items: path } } })).toEqual([
        {
          field: "lists.listOrders.items",
          rule: "must be at most 200 characters in at most 8 segments",
        },
      ]);
    }
  });

  it("setAt writes own properties only and refuses a prototype segment", () => {
    expect(() => setAt({}, "__proto__.polluted", "PENDING")).toThrow(/__proto__/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const target: Record<string, unknown> = {};
    setAt(target, "a.b", 1);
    expect(target).toEqual({ a: { b: 1 } });
    expect(Object.getPrototypeOf(target.a)).toBe(Object.prototype);
  });

  it("the sandbox dialect cannot be made to pollute Object.prototype", () => {
    // A profile built around the file check, as a dialect sandbox would hold it.
    const profile = profileOf({});
    const hostile = {
      ...profile,
      answers: {
        ...profile.answers,
        withdrawToBank: { id: "id", status: "__proto__.polluted", failureReason: "r" },
      },
    };
    expect(() =>
      inDialect(
        { kind: "profile", profile: hostile },
        "withdrawToBank",
        { transactionId: "t", status: "PENDING" },
        true,
      ),
    ).toThrow();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("provider names that would overwrite another field", () => {
  it("refuses stableWithdrawal.currency named like the amount", () => {
    expect(issuesOf({ requests: { stableWithdrawal: { currency: "amount" } } })).toEqual([
      {
        field: "requests.stableWithdrawal.currency",
        rule: '"amount" is another field of the withdrawStable body; it would be overwritten',
      },
    ]);
  });

  it("refuses the link token named like the decline's reason", () => {
    expect(issuesOf({ requests: { paymentLinkDecline: { in: "body", name: "reason" } } })).toEqual([
      {
        field: "requests.paymentLinkDecline.name",
        rule: '"reason" is another field of the declinePaymentLink body; it would be overwritten',
      },
    ]);
  });

  it("accepts names that swap places, which overwrite nothing", () => {
    const profile = profileOf({
      requests: { stableWithdrawal: { currency: "network", network: "currency" } },
    });
    expect(
      translateRequest(profile, "withdrawStable", {
        body: { amount: 5, toAddress: "T", currency: "USDT", network: "TRON" },
      }).body,
    ).toEqual({ amount: 5, toAddress: "T", network: "USDT", currency: "TRON" });
  });
});

describe("status words", () => {
  it.each([
    [" ", "statuses.pending[0]"],
    ["OK\u0000", "statuses.pending[0]"],
  ])("refuses %j", (bad, field) => {
    const issues = issuesOf({ statuses: { pending: [bad] } });
    expect(issues.map((i) => i.field)).toEqual([field]);
  });

  it("refuses one word in two lists, spaces and case aside", () => {
    expect(
      issuesOf({ statuses: { succeeded: ["DONE"], failed: ["done "] } }).map((i) => i.field),
    ).toEqual(["statuses.failed[0]"]);
    expect(
      issuesOf({ statuses: { succeeded: ["DONE"], failed: ["DONE "], caseSensitive: true } }).map(
        (i) => i.field,
      ),
    ).toEqual(["statuses.failed[0]"]);
    expect(
      issuesOf({ statuses: { succeeded: ["DONE"], failed: ["done"], caseSensitive: true } }),
    ).toEqual([]);
  });
});

describe("validFor in a provider's unit", () => {
  const producer = (profile: ReturnType<typeof profileOf>) =>
    new Producer({
      // envelopeOf validates only; a connection that never connects is enough.
      connection: new Redis({ lazyConnect: true }),
      prefix: "unused",
      accounts: ["default"],
      maxAttempts: 1,
      retentionMs: 1,
      profile,
    });
  const account = (validFor: number): JobInput => ({
    kind: "collection.virtual-account",
    account: "default",
    idempotencyKey: `va-${validFor}`,
    request: { body: { amount: 10_000, validFor } },
  });
  const refusal = (p: Producer, job: JobInput) => {
    try {
      p.envelopeOf(job);
      return undefined;
    } catch (error) {
      return (error as EnqueueValidationError).issues;
    }
  };

  it("refuses at enqueue minutes the provider's hours cannot carry whole", () => {
    const hours = producer(profileOf({ requests: { validForUnit: "hours" } }));
    expect(refusal(hours, account(45))).toEqual([
      {
        field: "request.body.validFor",
        rule: "must be a whole number of hours at this provider (minutes given)",
      },
    ]);
    expect(refusal(hours, account(120))).toBeUndefined();
    const seconds = producer(profileOf({ requests: { validForUnit: "seconds" } }));
    expect(refusal(seconds, account(45))).toBeUndefined();
  });
});
