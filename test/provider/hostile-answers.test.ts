import { afterAll, describe, expect, it } from "vitest";
import { PaymentsClient } from "../../src/client/payments-client.js";
import { readAnswer, submit } from "../../src/processors/upstream-call.js";
import { DEFAULT_PROVIDER_PROFILE } from "../../src/provider/profile.js";
import type { JobEnvelope, JobInput } from "../../src/queues/job-envelope.js";
import { bankPayout } from "../fixtures/batches.js";
import { usePipeline } from "../helpers/pipeline.js";
import { startScriptedServer } from "../helpers/scripted-server.js";

// A provider we did not write, answering hand-written JSON: keys in its syntax, ids JavaScript
// cannot hold, statuses that are not words, data of a megabyte.
const provider = await startScriptedServer();
afterAll(() => provider.close());

/** Keys the config accepts (any non-empty string without spaces or control characters). */
const KEYS = {
  oneletter: "e",
  slashes: 'sk/q"b\\c',
  escaped: "sk_abc_key",
} as const;
const p = usePipeline({
  PAYMENTS_API_URL: provider.baseUrl,
  PAYMENTS_API_KEY: "sk_default_key_0001",
  MONEYQ_ACCOUNTS: JSON.stringify(
    Object.entries(KEYS).map(([alias, apiKey]) => ({ alias, apiKey })),
  ),
});

const payout = (account: string, reference: string): JobInput =>
  bankPayout(`hostile-${account}`, reference, account);

async function runOne(job: JobInput) {
  const before = provider.requests.length;
  const [enqueued] = await p.producer().enqueueMany([job]);
  const result = await p.resultOf(enqueued?.jobId as string);
  await new Promise((r) => setTimeout(r, 200));
  return { result, sent: provider.requests.slice(before) };
}

/** `key` written as JSON may write it: every character as a \uXXXX escape. */
const uEscaped = (key: string) =>
  [...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("");
/** `key` with JSON's short escapes only. */
const shortEscaped = (key: string) => JSON.stringify(key).slice(1, -1).replaceAll("/", "\\/");

/** Finds `key` in stored text, in any escaped form. */
function leaks(text: string, key: string): boolean {
  const forms = [key, shortEscaped(key), JSON.stringify(shortEscaped(key)).slice(1, -1)];
  return forms.some((f) => text.includes(f)) || text.toLowerCase().includes(uEscaped(key));
}

describe("the API key inside a provider's JSON", () => {
  it("a one-letter key in the JSON's syntax: the answer still parses, nothing is resent", async () => {
    // `true`, `message` and `queued` all hold the key "e".
    provider.reply({
      status: 200,
      raw: '{"success":true,"message":"queued","data":{"transactionId":"T-1","status":"SUCCESSFUL"}}',
    });
    const { result, sent } = await runOne(payout("oneletter", "e1"));
    expect(sent).toHaveLength(1);
    expect(result).toMatchObject({ result: "succeeded", upstreamId: "T-1", attempts: 1 });
  });

  it("a one-letter key: an unreadable answer keeps its data with every e redacted", async () => {
    provider.reply({
      status: 200,
      raw: '{"success":true,"message":"queued","data":{"transactionId":"t-e2","echo":"here","e":1}}',
    });
    const { result, sent } = await runOne(payout("oneletter", "e2"));
    expect(sent).toHaveLength(1);
    expect(result).toMatchObject({ result: "needs_reconciliation", code: "unrecognised_answer" });
    const upstream = JSON.stringify(result.upstreamData);
    expect(upstream).toContain("[REDACTED]");
    expect(upstream).not.toMatch(/e/);
  });

  for (const [alias, write] of [
    ["slashes", shortEscaped],
    ["slashes", uEscaped],
    ["escaped", uEscaped],
    ["escaped", (k: string) => k.replace("a", "\\u0061")],
  ] as const) {
    it(`a key written as ${write(KEYS[alias])} in values and names is redacted after parsing`, async () => {
      const form = write(KEYS[alias]);
      provider.reply({
        status: 200,
        raw: `{"success":true,"message":"for ${form}","data":{"echo":"${form}","${form}":{"status":"${form}"}}}`,
      });
      const { result, sent } = await runOne(payout(alias, `k-${alias}-${form.length}`));
      expect(sent).toHaveLength(1);
      expect(result).toMatchObject({
        result: "needs_reconciliation",
        code: "unrecognised_answer",
        upstreamData: { echo: "[REDACTED]", "[REDACTED]": { status: "[REDACTED]" } },
      });
      expect(result.message).toContain('answered "for [REDACTED]"');
      expect(leaks(JSON.stringify(result), KEYS[alias])).toBe(false);
    });
  }

  it("a key in an error's JSON syntax still lets its code decide", async () => {
    provider.reply({
      status: 409,
      raw: '{"success":false,"code":"idempotency_key_reused","message":"reused"}',
    });
    const { result, sent } = await runOne(payout("oneletter", "e3"));
    expect(sent).toHaveLength(1);
    expect(result).toMatchObject({ result: "failed", code: "idempotency_key_reused" });
  });
});

describe("ids and statuses a provider writes in its own way", () => {
  it("takes a whole-number id JavaScript holds exactly", async () => {
    provider.reply({
      status: 200,
      raw: '{"success":true,"message":"ok","data":{"transactionId":12345,"status":"SUCCESSFUL"}}',
    });
    const { result } = await runOne(payout("default", "id-safe"));
    expect(result).toMatchObject({ result: "succeeded", upstreamId: "12345" });
  });

  it("never looks up an int64 id that JSON.parse rounded", async () => {
    provider.reply({
      status: 200,
      raw: '{"success":true,"message":"ok","data":{"transactionId":12345678901234567891,"status":"PENDING"}}',
    });
    const { result, sent } = await runOne(payout("default", "id-unsafe"));
    expect(sent.map((r) => r.method)).toEqual(["POST"]);
    expect(result).toMatchObject({ result: "needs_reconciliation", code: "unrecognised_answer" });
    expect(result.message).toContain("answers.withdrawToBank.id (transactionId)");
  });

  for (const [name, status] of [
    ["a number", "1"],
    ["null", "null"],
    ["an array", '["SUCCESSFUL"]'],
    ["an object", '{"code":"SUCCESSFUL"}'],
    ["65 characters", JSON.stringify("P".repeat(65))],
    ["a control character", '"PENDING\\u0000"'],
  ] as const) {
    it(`reads a status that is ${name} as unreadable, and never looks it up`, async () => {
      provider.reply({
        status: 200,
        raw: `{"success":true,"message":"ok","data":{"transactionId":"t-s","status":${status}}}`,
      });
      const { result, sent } = await runOne(payout("default", `status-${name}`));
      expect(sent.map((r) => r.method)).toEqual(["POST"]);
      expect(result).toMatchObject({ result: "needs_reconciliation", code: "unrecognised_answer" });
      expect(result.message).toContain("answers.withdrawToBank.status (status)");
    });
  }
});

describe("a provider's data is kept bounded", () => {
  it("keeps a truncated marker of 1 MB of data and a cut message", async () => {
    provider.reply({
      status: 200,
      body: { success: true, message: "m".repeat(100_000), data: { blob: "x".repeat(1_000_000) } },
    });
    const { result, sent } = await runOne(payout("default", "big-data"));
    expect(sent).toHaveLength(1);
    expect(result).toMatchObject({
      result: "needs_reconciliation",
      code: "unrecognised_answer",
      upstreamData: { truncated: true, bytes: expect.any(Number) },
    });
    expect((result.upstreamData as { bytes: number }).bytes).toBeGreaterThan(1_000_000);
    expect(JSON.stringify(result).length).toBeLessThan(4_000);
  });

  it("cuts a failure reason of 1 MB", async () => {
    provider.reply({
      status: 200,
      body: {
        success: true,
        message: "ok",
        data: { transactionId: "t-f", status: "FAILED", failureReason: "r".repeat(1_000_000) },
      },
    });
    const { result } = await runOne(payout("default", "big-reason"));
    expect(result).toMatchObject({ result: "failed", upstreamId: "t-f" });
    expect((result.message ?? "").length).toBeLessThan(600);
  });

  it("cuts an error's message of 1 MB", async () => {
    provider.reply({ status: 400, body: { success: false, message: "n".repeat(1_000_000) } });
    const { result } = await runOne(payout("default", "big-error"));
    expect(result).toMatchObject({ result: "failed", code: "validation_error" });
    expect((result.message ?? "").length).toBeLessThan(700);
  });
});

describe("a 2xx larger than the client reads", () => {
  it("is a definite answer whose data is unreadable, never resent", async () => {
    const client = new PaymentsClient({
      baseUrl: provider.baseUrl,
      apiKey: "sk_small_reader",
      maxResponseBytes: 1_000,
    });
    try {
      provider.reply({
        status: 200,
        body: {
          success: true,
          message: "ok",
          data: { transactionId: "t-l", pad: "p".repeat(5_000) },
        },
      });
      const envelope = {
        kind: "payout.bank",
        account: "default",
        idempotencyKey: "large-answer",
        request: payout("default", "large").request,
      } as unknown as JobEnvelope;
      const answer = await submit(client, envelope);
      const reading = readAnswer(DEFAULT_PROVIDER_PROFILE, "payout.bank", "submit", answer);
      expect(reading.outcome).toMatchObject({ type: "unrecognised" });
      expect((reading.outcome as { message: string }).message).toContain("larger than 1000 bytes");
    } finally {
      await client.close();
    }
  });
});
