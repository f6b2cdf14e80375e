import { afterAll, describe, expect, it } from "vitest";
import { EVERY_READ_ANSWER } from "../fixtures/provider-profiles.js";
import { runCli } from "../helpers/cli.js";
import { useTestRedis } from "../helpers/redis.js";
import { startScriptedServer } from "../helpers/scripted-server.js";

// The service's Redis, whose rate gate the check's reads go through.
const redis = useTestRedis("check");
// A provider we did not write: every read-only operation gets the answer the test scripts.
const provider = await startScriptedServer();
afterAll(() => provider.close());

const check = (args: string[] = [], env: Record<string, string> = {}) =>
  runCli(["provider", "check", ...args], {
    PAYMENTS_API_URL: provider.baseUrl,
    PAYMENTS_API_KEY: "sk_check_key_0001",
    REDIS_URL: redis.url,
    MONEYQ_REDIS_PREFIX: redis.prefix,
    ...env,
  });

describe("moneyq provider check gives a go-ahead only for what it verified", () => {
  it("gives no go-ahead without a real submission's answer: exits 3 naming each one", async () => {
    provider.reply({ status: 200, body: EVERY_READ_ANSWER });
    const result = await check();
    expect(result.code).toBe(3);
    expect(result.stdout).not.toContain("cannot read");
    expect(result.stdout).toContain("ok   getTransaction");
    expect(result.stdout).toContain(
      "not verified: answers.withdrawToBank.id, answers.withdrawToBank.status: no real answer of withdrawToBank was read: this check sends no submission; run it with --submit",
    );
    expect(result.stdout).toContain("nothing unreadable, but some entries were not read");
    expect(result.stdout).not.toContain("go ahead");
  });

  it("exits 3 naming each entry an empty list left unverified", async () => {
    provider.reply({
      status: 200,
      body: { success: true, message: "ok", data: { rate: 1, transactions: [], orders: [] } },
    });
    const result = await check();
    expect(result.code).toBe(3);
    expect(result.stdout).toContain(
      "not verified: lists.listTransactions.id and .status: no item in the list to read them from",
    );
    expect(result.stdout).toContain(
      "not verified: no item of listTransactions with a readable id to look up",
    );
    expect(result.stdout).not.toContain("go ahead");
  });

  it("needs only what the kinds given with --kinds read", async () => {
    provider.reply({ status: 200, body: EVERY_READ_ANSWER });
    const before = provider.requests.length;
    const result = await check(["--kinds", "payout.bank"]);
    expect(result.code).toBe(3);
    expect(result.stdout).toContain("answers.withdrawToBank.id");
    expect(result.stdout).not.toContain("withdrawToMobileMoney");
    expect(result.stdout).not.toContain("listOrders");
    // Two rates, the transaction list and a lookup of its first item.
    expect(provider.requests.length - before).toBe(4);
  });

  it("names a refused key as such, not as a profile problem", async () => {
    provider.reply({ status: 401, body: { success: false, message: "unknown key" } });
    const result = await check();
    expect(result.code).toBe(3);
    expect(result.stdout).toContain("not verified: the key was refused (HTTP 401)");
    expect(result.stdout).not.toContain("cannot read");
    expect(result.stdout).not.toContain("fix MONEYQ_PROVIDER_PROFILE");
  });

  it("names a refused request and points at the rate flags", async () => {
    provider.reply({ status: 400, body: { success: false, message: "amount too small" } });
    const result = await check();
    expect(result.code).toBe(3);
    expect(result.stdout).toContain(
      "not verified: the provider refused the request (HTTP 400): check --from, --to, --from-iso2, --to-iso2 and --amount",
    );
    expect(result.stdout).not.toContain("cannot read");
  });

  it("names a provider out of reach", async () => {
    const result = await check([], { PAYMENTS_API_URL: "http://127.0.0.1:9/v1" });
    expect(result.code).toBe(3);
    expect(result.stdout).toContain("not verified: the provider could not be reached");
  });

  it.each([
    [["--amount", "abc"], "--amount: must be a finite positive number"],
    [["--amount", "-5"], "--amount: must be a finite positive number"],
    [["--amount", "Infinity"], "--amount: must be a finite positive number"],
    [["--from", "XYZ"], "--from: "],
    [["--to-iso2", "N"], "--to-iso2: "],
    [["--kinds", "payout.nope"], "--kinds: must be job kinds among payout.bank"],
    [
      ["--submit"],
      "--submit sends real submissions, so only to your provider's sandbox environment",
    ],
  ])("refuses %j before calling anything", async (args, message) => {
    const before = provider.requests.length;
    const result = await check(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(provider.requests.length).toBe(before);
  });
});
