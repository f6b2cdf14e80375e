import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { JOB_KIND_NAMES } from "../../src/queues/job-kinds.js";
import {
  jsonFile,
  PAYSTREAM_ADAPTER,
  PAYSTREAM_BARE_PROFILE_DOC,
  PAYSTREAM_CHECK_REQUESTS,
  PAYSTREAM_PROFILE_DOC,
} from "../fixtures/paystream.js";
import { runCli } from "../helpers/cli.js";
import { useForeignProvider } from "../helpers/foreign-provider.js";

// Paystream, a provider written independently of the sandbox, plays the provider's sandbox
// environment: the check's submissions are real requests to it.
const SANDBOX_KEY = "sk_paystream_sandbox_0001";
const PRODUCTION_KEY = "sk_paystream_live_0001";
const paystream = useForeignProvider({ apiKeys: [SANDBOX_KEY, PRODUCTION_KEY], settleMs: 200 });
const profile = jsonFile("profile.json", PAYSTREAM_PROFILE_DOC);
const bare = jsonFile("bare.json", PAYSTREAM_BARE_PROFILE_DOC);
const requests = jsonFile("requests.json", PAYSTREAM_CHECK_REQUESTS);

const check = (args: string[], env: Record<string, string> = {}) =>
  runCli(["provider", "check", ...args], {
    PAYMENTS_SANDBOX_API_URL: paystream.baseUrl,
    PAYMENTS_SANDBOX_API_KEY: SANDBOX_KEY,
    ...env,
  });
const submit = (env: Record<string, string>, args: string[] = []) =>
  check(["--submit", "--requests", requests, ...args], env);

describe("moneyq provider check --submit, against an independent provider's sandbox environment", () => {
  it("exits 0 with a profile written for the provider, after one real submission of each kind", async () => {
    const before = (await paystream.state()).requests.length;
    const result = await submit({ MONEYQ_PROVIDER_PROFILE: profile });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      `submits to your provider's sandbox environment at ${paystream.baseUrl}`,
    );
    expect(result.stdout).toContain("answers.withdrawToBank.id (transfer.id) = ");
    expect(result.stdout).toContain(
      "answers.getTransaction.status (transfer.state) = completed (succeeded)",
    );
    expect(result.stdout).toContain("lists.listTransactions.id (id) = ");
    expect(result.stdout).toMatch(/the check's payout\.bank \(\d+\) is among its items/);
    expect(result.stdout).toContain("go ahead");
    // Every kind was submitted once, under a key of its own, to the sandbox environment's key.
    const { requests: sent, records } = await paystream.state();
    const posts = sent.slice(before).filter((r) => r.method === "POST");
    expect(posts).toHaveLength(JOB_KIND_NAMES.length);
    expect(posts.every((r) => r.merchant === "0" && r.status === 200)).toBe(true);
    expect(records.filter((r) => r.merchant === "1")).toHaveLength(0);
  });

  it("never exits 0 with a profile whose paths are all bare: it names each entry it cannot read", async () => {
    const result = await submit({ MONEYQ_PROVIDER_PROFILE: bare });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      'cannot read answers.withdrawToBank.id (id): nothing at id; the answer is an object with transfer; answers.withdrawToBank.id could be "transfer.id"',
    );
    expect(result.stdout).toContain("cannot read answers.getTransaction.status (state)");
    expect(result.stdout).not.toContain("go ahead");
  });

  it("reads through an adapter module as through the profile", async () => {
    const result = await submit({ MONEYQ_PROVIDER_ADAPTER: PAYSTREAM_ADAPTER });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("answers.withdrawToBank.id (the adapter's readAnswer) = ");
  });

  it("shows a submission the provider refused, read as its profile reads it, and gives no go-ahead", async () => {
    const refused = jsonFile("refused.json", {
      ...PAYSTREAM_CHECK_REQUESTS,
      "payout.bank": {
        body: {
          amount: 1,
          currency: "NGN",
          bankCode: "044",
          accountNumber: "0000000001",
          accountName: "moneyq provider check",
          bankName: "Access Bank",
        },
      },
    });
    const result = await check(["--submit", "--requests", refused, "--kinds", "payout.bank"], {
      MONEYQ_PROVIDER_PROFILE: profile,
    });
    expect(result.code).toBe(3);
    expect(result.stdout).toContain(
      "not verified: the provider refused the request (HTTP 200, read as insufficient_funds): withdrawToBank: Insufficient balance",
    );
  });

  it("refuses to submit to the production address or with a production key, sending nothing", async () => {
    const before = (await paystream.state()).requests.length;
    const sameUrl = await submit({
      PAYMENTS_API_URL: paystream.baseUrl,
      PAYMENTS_API_KEY: PRODUCTION_KEY,
      MONEYQ_PROVIDER_PROFILE: profile,
    });
    expect(sameUrl.code).toBe(2);
    expect(sameUrl.stderr).toContain("PAYMENTS_SANDBOX_API_URL: must not be PAYMENTS_API_URL");
    const sameKey = await submit({
      PAYMENTS_API_URL: "https://api.example.com/v1",
      PAYMENTS_API_KEY: SANDBOX_KEY,
      MONEYQ_PROVIDER_PROFILE: profile,
    });
    expect(sameKey.code).toBe(2);
    expect(sameKey.stderr).toContain(
      "PAYMENTS_SANDBOX_API_KEY: must not be a production account's key",
    );
    expect(sameKey.stderr).not.toContain(SANDBOX_KEY);
    const none = await runCli(["provider", "check", "--submit"], {});
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("set PAYMENTS_SANDBOX_API_URL and PAYMENTS_SANDBOX_API_KEY");
    expect((await paystream.state()).requests.length).toBe(before);
  });
});

describe("moneyq provider suggest, then check --answers, on the answers a --submit run saved", () => {
  it("proposes a profile that the check then passes without edits", async () => {
    const saved = mkdtempSync(join(tmpdir(), "moneyq-answers-"));
    // A new user's first profile: only the request names, from the provider's documentation.
    const names = jsonFile("names.json", { requests: PAYSTREAM_PROFILE_DOC.requests });
    const run = await submit({ MONEYQ_PROVIDER_PROFILE: names }, ["--save", saved]);
    // It reads nothing of Paystream's answers: the run fails, but its answers are kept.
    expect(run.code).toBe(1);
    expect(readdirSync(saved)).toEqual(
      expect.arrayContaining([
        "withdrawToBank.json",
        "getTransaction.json",
        "listTransactions.json",
      ]),
    );
    const proposed = join(saved, "..", `${saved.split("/").at(-1)}-profile.json`);
    const suggestion = await runCli(["provider", "suggest", "--answers", saved, "--out", proposed]);
    expect(suggestion.code).toBe(0);
    const result = await check(["--answers", saved], { MONEYQ_PROVIDER_PROFILE: proposed });
    expect(result.stdout).not.toContain("cannot read");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("answers.withdrawToBank.id (transfer.id) = ");
    expect(result.stdout).toContain("lists.listTransactions.id (id) = ");
  });

  it("refuses a folder holding a file of no operation", async () => {
    const dir = mkdtempSync(join(tmpdir(), "moneyq-answers-"));
    const file = jsonFile("x.json", {});
    const result = await runCli(["provider", "suggest", "--answers", join(file, "..")]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("x.json: not named after an operation");
    const empty = await check(["--answers", dir]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain("--answers: no answer (operation.json)");
  });
});
