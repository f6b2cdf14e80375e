import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BANK_PAYOUT_BODY } from "../fixtures/batches.js";
import { TRON_ADDRESS } from "../fixtures/operation-examples.js";
import {
  FOREIGN_PROFILE,
  FOREIGN_PROFILE_DOC,
  profileFile,
} from "../fixtures/provider-profiles.js";
import { runCli, spawnCli } from "../helpers/cli.js";
import { useTestRedis } from "../helpers/redis.js";
import { type TestSandbox, useSandbox } from "../helpers/sandbox.js";

// The service's Redis, whose rate gate the check's reads go through.
const redis = useTestRedis("check");
const ours = useSandbox();
const foreign = useSandbox({ profile: FOREIGN_PROFILE });
const foreignFile = profileFile(FOREIGN_PROFILE_DOC);
// The foreign dialect but for one field the provider puts elsewhere.
const almostFile = profileFile({
  ...FOREIGN_PROFILE_DOC,
  answers: { ...FOREIGN_PROFILE_DOC.answers, getTransaction: { id: "transactionId" } },
});

/** A payout, an order and a stable withdrawal, so the lists have items whose ids and statuses can be read. */
async function seed(sb: TestSandbox, names: [string, string] = ["currency", "network"]) {
  const payout = await sb.api("POST", "/transaction/transfer/bank", {
    idem: "seed-1",
    body: { ...BANK_PAYOUT_BODY },
  });
  const order = await sb.api("POST", "/offer/offer_usd_ngn/order", {
    idem: "seed-2",
    body: { amount: 20, buyerDebitPaymentMethod: "WALLET", buyerCreditPaymentMethod: "WALLET" },
  });
  const [currency, network] = names;
  const demo = (await sb.control("GET", "/accounts")).body.data.accounts[0];
  const stable = await sb.api(
    "POST",
    `/stable-currency/sub-accounts/${demo.subAccountIds[0]}/withdraw`,
    {
      idem: "seed-3",
      body: { amount: "25.5", toAddress: TRON_ADDRESS, [currency]: "USDT", [network]: "polygon" },
    },
  );
  expect([payout.status, order.status, stable.status]).toEqual([200, 200, 200]);
}

const check = (sb: TestSandbox, profile?: string, args: string[] = []) =>
  runCli(["provider", "check", ...args], {
    PAYMENTS_API_URL: sb.sandbox.baseUrl,
    PAYMENTS_API_KEY: sb.sandbox.apiKey,
    REDIS_URL: redis.url,
    MONEYQ_REDIS_PREFIX: redis.prefix,
    ...(profile !== undefined && { MONEYQ_PROVIDER_PROFILE: profile }),
  });

/** The sandbox's first sub-account, for the check's lookup of a stable transaction. */
async function requestsFor(sb: TestSandbox): Promise<string> {
  const demo = (await sb.control("GET", "/accounts")).body.data.accounts[0];
  const file = join(mkdtempSync(join(tmpdir(), "moneyq-requests-")), "requests.json");
  const body = { amount: "1", toAddress: TRON_ADDRESS, currency: "USDT", network: "polygon" };
  writeFileSync(
    file,
    JSON.stringify({ "payout.stable": { params: { subAccountId: demo.subAccountIds[0] }, body } }),
  );
  return file;
}

describe("moneyq provider check", () => {
  it("reads and looks up through our dialect, moves no money, and gives no go-ahead without a submission", async () => {
    await seed(ours);
    const before = (await ours.control("GET", "/requests")).body.data.requests.length;
    const result = await check(ours, undefined, ["--requests", await requestsFor(ours)]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(3);
    for (const op of [
      "getExchangeRate",
      "getPaymentLinkRate",
      "listTransactions",
      "getTransaction",
      "listStableTransactions",
      "getStableTransaction",
      "listOrders",
      "getOrder",
    ])
      expect(result.stdout).toContain(`ok   ${op}`);
    expect(result.stdout).toContain("answers.getTransaction.status (status) = ");
    const sent = (await ours.control("GET", "/requests")).body.data.requests.slice(before);
    // Two rates, three lists, a lookup of each list's first item.
    expect(sent.length).toBe(8);
    expect(sent.every((r: { method: string }) => r.method === "GET")).toBe(true);
    expect(result.stdout).toContain(
      "not verified: answers.withdrawToBank.id, answers.withdrawToBank.status: no real answer of withdrawToBank was read",
    );
    expect(result.stdout).not.toContain("go ahead");
  });

  it("reads another dialect when the profile matches it", async () => {
    await seed(foreign, ["asset", "chain"]);
    const result = await check(foreign, foreignFile);
    expect(result.code).toBe(3);
    expect(result.stdout).toContain("lists.listTransactions.items (page.items): ");
    expect(result.stdout).toContain("rates.getExchangeRate.rate (quote.rate) = ");
    expect(result.stdout).toContain("ok   getOrder");
    expect(result.stdout).not.toContain("FAIL");
  });

  it("exits 1 naming each entry it could not read, the path tried and what is there", async () => {
    const plain = await check(foreign);
    expect(plain.code).toBe(1);
    expect(plain.stdout).toContain("FAIL getExchangeRate");
    expect(plain.stdout).toContain("cannot read rates.getExchangeRate.rate (rate)");
    expect(plain.stdout).toContain("cannot read lists.listOrders.items (orders)");
    expect(plain.stdout).toContain("fix MONEYQ_PROVIDER_PROFILE");

    // The list's items are read with the lookup's paths unless the list sets its own: the line
    // names the list's own entry, so that fixing it leaves the lookup as it is.
    const almost = await check(foreign, almostFile);
    expect(almost.code).toBe(1);
    expect(almost.stdout).toContain("FAIL listTransactions");
    expect(almost.stdout).toContain(
      "cannot read lists.listTransactions.id (transactionId, the lookup's path): in item 0, nothing at transactionId",
    );
    expect(almost.stdout).toContain("ok   listOrders");

    const backwards = await check(ours, foreignFile);
    expect(backwards.code).toBe(1);
    expect(backwards.stdout).toContain("cannot read lists.listOrders.items (results)");
  });

  it("documents itself in --help", async () => {
    const help = await runCli(["provider", "check", "--help"]);
    expect(help.code).toBe(0);
    for (const flag of [
      "--account",
      "--kinds",
      "--requests",
      "--submit",
      "--answers",
      "--save",
      "--from",
      "--to",
      "--from-iso2",
      "--to-iso2",
      "--amount",
    ])
      expect(help.stdout).toContain(flag);
  });

  it("needs a real provider to check", async () => {
    const result = await runCli(["provider", "check"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("provider check needs PAYMENTS_API_URL");
  });
});

describe("moneyq sandbox in other dialects", () => {
  const start = async (args: string[]) => {
    const child = spawnCli(["sandbox", "--port", "0", "--json", ...args]);
    let stdout = "";
    const line = await new Promise<string>((resolve, reject) => {
      child.stdout?.on("data", (c: Buffer) => {
        stdout += c.toString();
        if (stdout.includes("\n")) resolve(stdout);
      });
      child.once("exit", (code) => reject(new Error(`exited early with ${code}`)));
    });
    const info = JSON.parse(line.trim());
    // biome-ignore lint/suspicious/noExplicitAny: answers are inspected field by field.
    const get = async (path: string): Promise<any> =>
      (await fetch(`${info.baseUrl}${path}`, { headers: { "x-api-key": info.apiKey } })).json();
    const stop = async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      return exited;
    };
    return { get, stop };
  };

  it("--profile answers in the profile's shape", async () => {
    const sb = await start(["--profile", foreignFile]);
    const body = await sb.get("/order/my-orders");
    expect(body.success).toBe(true);
    expect(Array.isArray(body.data.results)).toBe(true);
    expect(body.data.orders).toBeUndefined();
    expect(await sb.stop()).toBe(0);
  });

  it("--spec-minimal answers with an empty data", async () => {
    const sb = await start(["--spec-minimal"]);
    expect(await sb.get("/order/my-orders")).toEqual({
      success: true,
      message: expect.any(String),
      data: {},
    });
    expect(await sb.stop()).toBe(0);
  });

  it("documents both flags in --help, and refuses them together", async () => {
    const help = await runCli(["sandbox", "--help"]);
    expect(help.stdout).toContain("--profile <file>");
    expect(help.stdout).toContain("--spec-minimal");
    const both = await runCli(["sandbox", "--profile", foreignFile, "--spec-minimal"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("give --profile or --spec-minimal, not both");
  });

  it("refuses a bad profile with exit code 2, the field and the rule", async () => {
    const bad = profileFile({ statuses: { succeeded: [] } });
    const result = await runCli(["sandbox", "--port", "0", "--profile", bad]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("statuses.succeeded: at least 1 item");
  });
});
