import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PaymentsInvalidRequestError, PaymentsResponseError } from "../../src/client/errors.js";
import { PaymentsClient } from "../../src/client/payments-client.js";
import { classify } from "../../src/processors/classify.js";
import { readAnswer } from "../../src/processors/upstream-call.js";
import { AdapterFailure, type ProviderAdapter } from "../../src/provider/adapter.js";
import { AdapterLoadError, loadProviderAdapter } from "../../src/provider/load-adapter.js";
import { DEFAULT_PROVIDER_PROFILE } from "../../src/provider/profile.js";
import { PAYSTREAM_ADAPTER } from "../fixtures/paystream.js";
import { runCli } from "../helpers/cli.js";
import { startScriptedServer } from "../helpers/scripted-server.js";

const dir = mkdtempSync(join(tmpdir(), "moneyq-adapter-"));
const moduleFile = (name: string, code: string) => {
  const file = join(dir, name);
  writeFileSync(file, code);
  return file;
};

const server = await startScriptedServer();
afterAll(() => server.close());
const clientWith = (adapter: ProviderAdapter) =>
  new PaymentsClient({ baseUrl: server.baseUrl, apiKey: "sk_adapter_key", adapter });

describe("an adapter module", () => {
  it("is loaded by its named exports or its default export", async () => {
    const named = await loadProviderAdapter(PAYSTREAM_ADAPTER);
    expect(Object.keys(named).sort()).toEqual(
      [
        "classifyRefusal",
        "listItems",
        "readAnswer",
        "readListItem",
        "readRate",
        "shapeRequest",
      ].sort(),
    );
    const byDefault = await loadProviderAdapter(
      moduleFile("default.mjs", "export default { readAnswer: () => undefined };"),
    );
    expect(Object.keys(byDefault)).toEqual(["readAnswer"]);
  });

  it.each([
    ["a non-function export", "export const readAnswer = 1;", "readAnswer must be a function"],
    ["no adapter function", "export const other = () => 1;", "exports none of readAnswer"],
    ["a module that throws", "throw new Error('boom');", "could not be loaded: boom"],
  ])("is refused with %s, naming the rule", async (_name, code, rule) => {
    const file = moduleFile(`bad-${rule.length}.mjs`, code);
    const error = await loadProviderAdapter(file).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AdapterLoadError);
    expect((error as Error).message).toContain(rule);
  });

  it("that cannot be loaded refuses start before anything connects, naming the variable", async () => {
    const bad = moduleFile("start.mjs", "export const readAnswer = 'no';");
    // A Redis that never answers: a start that got as far as connecting would say so instead.
    const result = await runCli(["start"], {
      REDIS_URL: "redis://127.0.0.1:1",
      PAYMENTS_API_URL: "https://api.example.com/v1",
      PAYMENTS_API_KEY: "sk_live_adapter_start",
      MONEYQ_PROVIDER_ADAPTER: bad,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("MONEYQ_PROVIDER_ADAPTER: readAnswer must be a function");
    expect(result.stderr).not.toMatch(/\n\s+at /);
    const missing = await runCli(["start"], {
      PAYMENTS_API_URL: "https://api.example.com/v1",
      PAYMENTS_API_KEY: "sk_live_adapter_start",
      MONEYQ_PROVIDER_ADAPTER: join(dir, "nowhere.mjs"),
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      "MONEYQ_PROVIDER_ADAPTER: must be the path of an ES module file (.js or .mjs) that exists",
    );
  });

  it("that throws or answers nonsense makes the answer unreadable, never a resend", () => {
    const answer = { message: "ok", data: { transfer: { id: 1, state: "completed" } } };
    for (const adapter of [
      {
        readAnswer: () => {
          throw new Error("bug");
        },
      },
      { readAnswer: () => "not fields" as never },
    ]) {
      let reading: unknown;
      try {
        reading = readAnswer(DEFAULT_PROVIDER_PROFILE, "payout.bank", "submit", answer, adapter);
      } catch (error) {
        reading = error;
      }
      expect(reading).toBeInstanceOf(AdapterFailure);
    }
    // What the pipeline makes of a reading that throws (processors/call-upstream.ts).
    const action = classify(
      {
        type: "unrecognised",
        message: "the answer could not be read: the provider adapter's readAnswer threw: bug",
      },
      { phase: "submit", idempotent: true, lastAttempt: false, sentBefore: false },
    );
    expect(action).toMatchObject({ type: "needs_reconciliation", code: "unrecognised_answer" });
  });

  it("whose refusal reading throws leaves the refusal unreadable; whose request shaping throws sends nothing", async () => {
    server.reply({ status: 200, body: { success: false, message: "no" } });
    const refused = await clientWith({
      classifyRefusal: () => {
        throw new Error("bug");
      },
    })
      .getTransaction({ params: { transactionId: "t1" } })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PaymentsResponseError);
    expect((refused as PaymentsResponseError).definiteAnswer?.unreadable).toContain(
      "the provider adapter's classifyRefusal threw: bug",
    );
    const before = server.requests.length;
    const unsent = await clientWith({
      shapeRequest: () => {
        throw new Error("bug");
      },
    })
      .getTransaction({ params: { transactionId: "t1" } })
      .catch((e: unknown) => e);
    expect(unsent).toBeInstanceOf(PaymentsInvalidRequestError);
    expect(server.requests.length).toBe(before);
  });
});
