import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { createLogger } from "../../src/logger.js";
import { type Service, startService } from "../../src/service/start-service.js";
import { runCli } from "../helpers/cli.js";
import { useTestRedis } from "../helpers/redis.js";
import { call } from "../helpers/sandbox.js";
import { useSandboxProcess } from "../helpers/sandbox-process.js";

// A dry run of stable payouts against the sub-account balance the provider reports (4.15): the
// sandbox in its own process holds 1000 of each stable currency on each network.
const KEY = "sk_sandbox_funds_check_0001";
const OTHER_KEY = "sk_sandbox_funds_other_0001";
const TOKEN = "tok_funds_ops_0123456789abcdef";
const TO = "TJRabPrwbZy45sbavfcjinPJC18kjpRTv8";
const redis = useTestRedis("funds");
const sandbox = useSandboxProcess();
let service: Service | undefined;
let env: Record<string, string> = {};
let sub = "";
let othersSub = "";

async function subAccountOf(accountId: string): Promise<string> {
  const res = await call(`${sandbox.controlUrl}/accounts`, "GET");
  const account = res.body.data.accounts.find(
    (a: { accountId: string }) => a.accountId === accountId,
  );
  return account.subAccountIds[0];
}

beforeAll(async () => {
  for (const [accountId, apiKey] of [
    ["acct_funds", KEY],
    ["acct_other", OTHER_KEY],
  ] as const) {
    const res = await call(`${sandbox.controlUrl}/accounts`, "POST", {
      body: { accountId, apiKey, stableBalance: "1000" },
    });
    expect(res.status).toBe(200);
  }
  sub = await subAccountOf("acct_funds");
  othersSub = await subAccountOf("acct_other");
  env = {
    REDIS_URL: redis.url,
    PAYMENTS_API_URL: sandbox.baseUrl,
    MONEYQ_REDIS_PREFIX: redis.prefix,
    MONEYQ_LOG_LEVEL: "silent",
    MONEYQ_API_PORT: "0",
    MONEYQ_ACCOUNTS: JSON.stringify([
      { alias: "funds", apiKey: KEY, ratePerSecond: 50, concurrency: 4 },
    ]),
    MONEYQ_API_TOKENS: JSON.stringify([{ name: "ops", token: TOKEN, accounts: ["funds"] }]),
  };
  service = await startService({ config: loadConfig(env), logger: createLogger("silent") });
}, 60_000);
afterAll(async () => {
  await service?.close();
});

const HEADER = "reference,subAccountId,amount,toAddress,currency,network";
/** USDT on polygon: 4 rows of 300.25 (1201, over the 1000 held); USDC on base: 2 of 5. */
const csv = (subAccountId: string) =>
  [
    HEADER,
    ...Array.from({ length: 4 }, (_, i) => `u-${i},${subAccountId},300.25,${TO},USDT,polygon`),
    `c-1,${subAccountId},5,${TO},USDC,base`,
    `c-2,${subAccountId},5,${TO},USDC,base`,
  ].join("\n");

// biome-ignore lint/suspicious/noExplicitAny: tests read answers field by field
async function dryRun(kind: string, body: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${service?.apiUrl}/v1/batches?kind=${kind}&dryRun=true`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "text/csv" },
    body,
  });
  return { status: res.status, body: await res.json() };
}

const atSandbox = () => sandbox.requests("acct_funds");

describe("a dry run compares a stable batch's needs with the provider's balances", () => {
  it("says which currency is short, by how much, from one balance read and nothing else", async () => {
    const before = (await atSandbox()).length;
    const { status, body } = await dryRun("payout.stable", csv(sub));
    expect(status).toBe(200);
    expect(body.funds).toEqual({
      state: "short",
      lines: [
        {
          subAccountId: sub,
          currency: "USDT",
          network: "polygon",
          rows: 4,
          needed: "1201.00",
          available: "1000",
          state: "short",
          short: "201.00",
        },
        {
          subAccountId: sub,
          currency: "USDC",
          network: "base",
          rows: 2,
          needed: "10",
          available: "1000",
          state: "enough",
        },
      ],
    });
    const sent = (await atSandbox()).slice(before);
    expect(sent.map((r) => `${r.method} ${r.path}`)).toEqual([
      `GET /v1/stable-currency/sub-accounts/${sub}/balance`,
    ]);
  });

  it("says not verified, with the provider's reason, for a sub-account the key does not own", async () => {
    const { status, body } = await dryRun("payout.stable", csv(othersSub));
    expect(status).toBe(200);
    expect(body.funds.state).toBe("not_verified");
    for (const line of body.funds.lines) {
      expect(line.state).toBe("not_verified");
      expect(line.available).toBeUndefined();
      expect(line.why).toMatch(/^the provider could not be asked: /);
    }
  });

  it("reads no balance for a kind the provider reports none of", async () => {
    const before = (await atSandbox()).length;
    const bank = [
      "reference,amount,currency,bankCode,accountNumber,accountName,bankName",
      "b-1,100,NGN,044,0123456789,Ada Obi,Access Bank",
    ].join("\n");
    const { status, body } = await dryRun("payout.bank", bank);
    expect(status).toBe(200);
    expect(body.funds).toBeUndefined();
    expect((await atSandbox()).slice(before)).toEqual([]);
  });

  it("the CLI's dry run prints the same comparison", async () => {
    const file = join(tmpdir(), `funds-${process.pid}.csv`);
    await writeFile(file, csv(sub));
    const run = await runCli(
      ["batch", "submit", file, "--kind", "payout.stable", "--dry-run"],
      env,
    );
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("funds: SHORT (verified: read from the provider's balances)");
    expect(run.stdout).toContain(
      `${sub} USDT on polygon: 4 rows need 1201.00, available 1000: short by 201.00 (verified)`,
    );
    expect(run.stdout).toContain(
      `${sub} USDC on base: 2 rows need 10, available 1000: enough (verified)`,
    );
  });
});
