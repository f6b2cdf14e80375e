import { describe, expect, it } from "vitest";
import { checkFunds, MAX_FUNDS_READS, stableNeeds } from "../../src/batches/funds-check.js";
import { DEFAULT_PROVIDER_PROFILE, parseProviderProfile } from "../../src/provider/profile.js";
import { type BalanceReading, readBalances } from "../../src/provider/read-balances.js";

const row = (subAccountId: string, amount: unknown, currency?: string, network?: string) => ({
  params: { subAccountId },
  body: { amount, toAddress: "T".padEnd(34, "x"), currency, network },
});

const read =
  (lines: { currency: string; network: string; amount: string | number }[]) => async () =>
    ({ read: true, lines }) as BalanceReading;

describe("what a stable batch needs", () => {
  it("sums each sub-account, currency and network exactly, in the rows' order", () => {
    const needs = stableNeeds([
      row("sub_1", "0.1", "USDT", "polygon"),
      row("sub_1", "0.2", "usdt", "Polygon"),
      row("sub_1", "5", "USDC", "base"),
      row("sub_2", "1.000001", "USDT", "polygon"),
      row("sub_1", "not a number", "USDT", "polygon"),
    ]);
    expect(needs.map((n) => [n.subAccountId, n.currency, n.network, n.rows])).toEqual([
      ["sub_1", "USDT", "polygon", 2],
      ["sub_1", "USDC", "base", 1],
      ["sub_2", "USDT", "polygon", 1],
    ]);
  });
});

describe("a dry run's funds check", () => {
  it("adds up 200,000 rows of one sub-account exactly", async () => {
    const rows = Array.from({ length: 200_000 }, (_, i) =>
      row("sub_1", i === 0 ? "0.000001" : "2", "USDT", "polygon"),
    );
    const report = await checkFunds("a", stableNeeds(rows), read([]));
    expect(report.lines[0]).toMatchObject({ rows: 200_000, needed: "399998.000001" });
  });

  const cases: {
    name: string;
    rows: ReturnType<typeof row>[];
    lines: { currency: string; network: string; amount: string | number }[];
    state: "enough" | "short" | "not_verified";
    line: Record<string, unknown>;
  }[] = [
    {
      name: "enough, to the last unit (0.1 + 0.2 is 0.3, not 0.30000000000000004)",
      rows: [row("sub_1", "0.1", "USDT", "polygon"), row("sub_1", "0.2", "USDT", "polygon")],
      lines: [{ currency: "USDT", network: "polygon", amount: "0.300000" }],
      state: "enough",
      line: { needed: "0.3", available: "0.3", state: "enough" },
    },
    {
      name: "short by exactly what is missing",
      rows: [row("sub_1", "600.25", "USDT", "polygon"), row("sub_1", "600", "USDT", "polygon")],
      lines: [{ currency: "USDT", network: "polygon", amount: 1000 }],
      state: "short",
      line: { needed: "1200.25", available: "1000", state: "short", short: "200.25" },
    },
    {
      name: "a balance on another network does not count",
      rows: [row("sub_1", "1", "USDT", "base")],
      lines: [{ currency: "USDT", network: "polygon", amount: "5" }],
      state: "not_verified",
      line: {
        state: "not_verified",
        why: "the provider's answer has no readable USDT balance on base",
      },
    },
    {
      name: "an unreadable amount is not zero",
      rows: [row("sub_1", "1", "USDT", "polygon")],
      lines: [{ currency: "USDT", network: "polygon", amount: "-3" }],
      state: "not_verified",
      line: { state: "not_verified" },
    },
    {
      name: "rows without a network are not compared",
      rows: [row("sub_1", "1", "USDT")],
      lines: [{ currency: "USDT", network: "polygon", amount: "5" }],
      state: "not_verified",
      line: { state: "not_verified", why: expect.stringContaining("no currency or network") },
    },
  ];
  for (const c of cases)
    it(c.name, async () => {
      const report = await checkFunds("a", stableNeeds(c.rows), read(c.lines));
      expect(report.state).toBe(c.state);
      expect(report.lines[0]).toMatchObject(c.line);
    });

  it("says short when one line is short, even when another is not verified", async () => {
    const report = await checkFunds(
      "a",
      stableNeeds([row("sub_1", "9", "USDT", "polygon"), row("sub_1", "9", "USDC", "solana")]),
      read([{ currency: "USDT", network: "polygon", amount: "1" }]),
    );
    expect(report.state).toBe("short");
    expect(report.lines.map((l) => l.state)).toEqual(["short", "not_verified"]);
  });

  it("reads each sub-account once, at most MAX_FUNDS_READS of them, and says why it stopped", async () => {
    const asked: string[] = [];
    const rows = Array.from({ length: MAX_FUNDS_READS + 5 }, (_, i) =>
      row(`sub_${i}`, "1", "USDT", "polygon"),
    );
    const report = await checkFunds("a", stableNeeds([...rows, ...rows]), async (_a, sub) => {
      asked.push(sub);
      return { read: true, lines: [{ currency: "USDT", network: "polygon", amount: "2" }] };
    });
    expect(asked).toHaveLength(MAX_FUNDS_READS);
    expect(new Set(asked).size).toBe(MAX_FUNDS_READS);
    expect(report.lines.filter((l) => l.state === "enough")).toHaveLength(MAX_FUNDS_READS);
    expect(report.lines.at(-1)).toMatchObject({
      state: "not_verified",
      why: `a dry run reads at most ${MAX_FUNDS_READS} sub-accounts`,
    });
    expect(report.state).toBe("not_verified");
  });

  it("without a provider to ask, nothing is verified", async () => {
    const report = await checkFunds("a", stableNeeds([row("s", "1", "USDT", "base")]), undefined);
    expect(report).toMatchObject({ state: "not_verified", lines: [{ state: "not_verified" }] });
  });
});

describe("reading a balance answer through the profile", () => {
  it("reads the sandbox's shape by default", () => {
    const reading = readBalances(DEFAULT_PROVIDER_PROFILE, {
      balances: [
        { currency: "usdt", network: "POLYGON", balance: "12.5" },
        { currency: "USDC", network: "base", balance: null },
        { currency: "USDC", network: 7, balance: "1" },
      ],
    });
    expect(reading).toEqual({
      read: true,
      lines: [{ currency: "USDT", network: "polygon", amount: "12.5" }],
    });
  });

  it("reads another provider's shape where its profile says", () => {
    const parsed = parseProviderProfile({
      balances: {
        items: "wallet.assets",
        currency: "asset",
        network: "chain",
        amount: "free.value",
      },
    });
    if (!parsed.success) throw new Error(JSON.stringify(parsed.issues));
    const reading = readBalances(parsed.profile, {
      wallet: { assets: [{ asset: "USDC", chain: "solana", free: { value: 40 } }] },
    });
    expect(reading).toEqual({
      read: true,
      lines: [{ currency: "USDC", network: "solana", amount: 40 }],
    });
  });

  it("says why when the answer has no list", () => {
    expect(readBalances(DEFAULT_PROVIDER_PROFILE, { balance: "5" })).toEqual({
      read: false,
      why: "its answer has no list at balances",
    });
  });

  it("refuses a profile path that reaches the prototype", () => {
    const parsed = parseProviderProfile({ balances: { items: "__proto__.x" } });
    expect(parsed.success).toBe(false);
  });
});
