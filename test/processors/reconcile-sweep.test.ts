import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sweepKeys } from "../../src/redis/keys.js";
import { runCli, spawnCli } from "../helpers/cli.js";
import { useTestRedis } from "../helpers/redis.js";
import { call } from "../helpers/sandbox.js";
import { useSandboxProcess } from "../helpers/sandbox-process.js";
import { bankCsv, until } from "../helpers/service.js";
import {
  processApi,
  type ServiceProcess,
  startServiceProcess,
} from "../helpers/service-process.js";

// The sandbox in its own process plays the provider's books: 1,000 payouts moneyq made, then
// three of each drift kind seeded by its control API; and, on a second account, 20 payouts the
// provider made while every answer was lost (commit, then the connection dropped; a resend of
// the key refused), which moneyq left to reconciliation.
const sandbox = useSandboxProcess(["--reject-repeated-keys", "--settle-delay-ms", "20"]);
const redis = useTestRedis("sweep");
const TOKEN = "tok_sweep_0123456789abcdef";
const KEYS = { books: "sk_sandbox_sweep_books_0001", dropped: "sk_sandbox_sweep_dropped_0001" };
const ROWS = 1_000;
let service: ServiceProcess | undefined;

const env = () => ({
  REDIS_URL: redis.url,
  MONEYQ_REDIS_PREFIX: redis.prefix,
  PAYMENTS_API_URL: sandbox.baseUrl,
  MONEYQ_ACCOUNTS: JSON.stringify([
    { alias: "books", apiKey: KEYS.books },
    { alias: "dropped", apiKey: KEYS.dropped },
  ]),
  MONEYQ_API_TOKENS: JSON.stringify([
    { name: "finance", token: TOKEN, accounts: ["books", "dropped"] },
  ]),
  MONEYQ_RATE_LIMIT_PER_SECOND: "400",
  MONEYQ_RECHECK_AFTER: "off",
});

const api = processApi(() => service, TOKEN);

/** Pays a batch through the service and answers its report's lines once it has finished. */
async function pay(
  account: string,
  tag: string,
  rows: number,
  patch = (_n: number, _c: Record<string, string>) => undefined,
) {
  const csv = bankCsv(tag, rows, patch);
  const submitted = await api("POST", `/v1/batches?kind=payout.bank&account=${account}`, csv);
  expect(submitted.status, submitted.text).toBe(202);
  const { batchId } = submitted.json();
  await until(
    async () => (await api("GET", `/v1/batches/${batchId}?account=${account}`)).json(),
    (b) => b.finishedAt !== undefined,
    120_000,
  );
  const report = await api("GET", `/v1/batches/${batchId}/results?format=jsonl&account=${account}`);
  return report.text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
}

/** The events on the accounts' results streams, parsed. */
async function events(accounts: string[]) {
  return (await redis.resultEntries(accounts)).map(([, fields]) =>
    JSON.parse(fields[fields.indexOf("event") + 1] as string),
  );
}

const control = (method: string, path: string, body?: unknown) =>
  call(`${sandbox.controlUrl}${path}`, method, body === undefined ? {} : { body });

let window: { since: string; until: string };
const expected = new Map<string, string>();

beforeAll(async () => {
  await sandbox.addAccount("acct_books", KEYS.books);
  await sandbox.addAccount("acct_dropped", KEYS.dropped, { dropAfterCommitRate: 1 });
  service = await startServiceProcess(env());
  const since = new Date().toISOString();
  // Rows 1 to 3 fail at the provider (its magic account number); the rest succeed.
  const lines = await pay("books", "ledger", ROWS, (n, cells) => {
    if (n <= 3) cells.accountNumber = "0000000001";
  });
  const byRow = new Map(lines.map((l) => [l.row, l]));
  const seed = async (rows: number[], kind: string, edit: Record<string, unknown>) => {
    for (const row of rows) {
      const id = byRow.get(row).upstreamId as string;
      const res = await control("PATCH", `/transactions/${id}`, edit);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expected.set(id, kind);
    }
  };
  await seed([1, 2, 3], "provider_succeeded", { status: "SUCCESSFUL" });
  await seed([4, 5, 6], "provider_failed", { status: "FAILED" });
  await seed([7, 8, 9], "amount_differs", { amount: 999 });
  for (const row of [10, 11, 12]) {
    const id = byRow.get(row).upstreamId as string;
    await control("PATCH", `/transactions/${id}`, { hidden: true });
    expected.set(`row:${row}`, "missing_at_provider");
  }
  for (let i = 0; i < 3; i += 1) {
    const res = await control("POST", "/accounts/acct_books/external-debits", {
      amount: 50 + i,
      currency: "NGN",
    });
    expected.set(res.body.data.transaction.transactionId, "unknown_debit");
  }
  window = { since, until: new Date(Date.now() + 1_000).toISOString() };
}, 300_000);

afterAll(async () => {
  await service?.stop();
});

const reconcile = (args: string[]) => runCli(["reconcile", ...args], env());

describe("the reconciliation sweep", { timeout: 180_000 }, () => {
  it("reports exactly the seeded drift, with both sides' evidence, and nothing else", async () => {
    const out = mkdtempSync(join(tmpdir(), "moneyq-drift-"));
    const result = await reconcile([
      "--account",
      "books",
      "--since",
      window.since,
      "--until",
      window.until,
      "--out",
      out,
    ]);
    expect(result.stderr).toContain("15 drift items");
    expect(result.code).toBe(1);
    const jsonl = readdirSync(out).find((f) => f.endsWith(".jsonl")) as string;
    const items = readFileSync(join(out, jsonl), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(items).toHaveLength(15);
    const kinds = items.map((i) => i.kind).sort();
    expect(kinds).toEqual(
      [
        "amount_differs",
        "missing_at_provider",
        "provider_failed",
        "provider_succeeded",
        "unknown_debit",
      ].flatMap((k) => [k, k, k]),
    );
    for (const item of items.filter((i) => i.kind !== "missing_at_provider")) {
      expect(expected.get(item.provider.id), JSON.stringify(item)).toBe(item.kind);
      if (item.kind !== "unknown_debit") expect(item.moneyq.jobId).toMatch(/^j_/);
    }
    const missingRows = items
      .filter((i) => i.kind === "missing_at_provider")
      .map((i) => i.moneyq.row)
      .sort();
    expect(missingRows).toEqual([10, 11, 12]);
    const csv = readFileSync(join(out, jsonl.replace(".jsonl", ".csv")), "utf8")
      .trim()
      .split("\n");
    expect(csv).toHaveLength(16);
  });

  it("run again, reports the same items and records nothing twice", async () => {
    const driftEvents = async () =>
      (await events(["books"])).filter((e) => e.type === "reconciliation.drift").length;
    const before = await driftEvents();
    const again = await reconcile([
      "--account",
      "books",
      "--since",
      window.since,
      "--until",
      window.until,
    ]);
    expect(again.code).toBe(1);
    const items = again.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(items.map((i) => i.id).sort()).toHaveLength(15);
    expect(await driftEvents()).toBe(before);
    expect(before).toBe(15);
  });

  it("killed in the middle, resumes where it stood and reports each item once", async () => {
    // Every answer of the books account takes 300 ms: time to kill the sweep between its lists.
    await control("PUT", "/accounts/acct_books/faults", { latencyMs: 300 });
    try {
      const admin = redis.connect();
      const cursor = sweepKeys(redis.space(), "books").cursor;
      const child = spawnCli(
        ["reconcile", "--account", "books", "--since", window.since, "--until", window.until],
        env(),
      );
      await until(
        async () => Number((await admin.hget(cursor, "list")) ?? 0),
        (list) => list >= 1,
        30_000,
      );
      child.kill("SIGKILL");
      const resumed = await reconcile([
        "--account",
        "books",
        "--since",
        window.since,
        "--until",
        window.until,
      ]);
      expect(resumed.stderr).toContain("a stopped sweep resumed");
      const ids = resumed.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).id);
      expect(ids).toHaveLength(15);
      expect(new Set(ids).size).toBe(15);
    } finally {
      await control("DELETE", "/accounts/acct_books/faults");
    }
  });

  it("resolves every payout left to reconciliation that the provider made, sending nothing that moves money", async () => {
    const since = new Date().toISOString();
    const lines = await pay("dropped", "dropped", 20);
    expect(lines.map((l) => l.result)).toEqual(Array(20).fill("needs_reconciliation"));
    // The provider answers again: the sweep's reads are not dropped.
    await control("DELETE", "/accounts/acct_dropped/faults");
    const seqBefore = Math.max(0, ...(await sandbox.requests("acct_dropped")).map((r) => r.seq));
    const result = await reconcile([
      "--account",
      "dropped",
      "--since",
      since,
      "--until",
      new Date(Date.now() + 1_000).toISOString(),
    ]);
    expect(result.stderr).toContain("20 resolved");
    const during = await sandbox.requests("acct_dropped", seqBefore);
    expect(during.filter((r) => r.method !== "GET")).toEqual([]);
    const resolved = (await events(["dropped"])).filter((e) => e.type === "job.resolved");
    expect(resolved).toHaveLength(20);
    for (const event of resolved) {
      expect(event.data.result).toBe("needs_reconciliation");
      expect(event.data.resolution).toMatchObject({ to: "succeeded", resolver: { by: "sweep" } });
      expect(event.data.resolution.evidence.provider.status).toBe("SUCCESSFUL");
    }
  });
});
