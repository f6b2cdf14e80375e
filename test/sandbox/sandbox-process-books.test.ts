import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { call } from "../helpers/sandbox.js";
import { bankPayout } from "../helpers/sandbox-account.js";
import { useSandboxProcess } from "../helpers/sandbox-process.js";

const SETTLE = 60_000;
const DAY = 24 * 3600_000;
const MINUTE = 60_000;
const KEY = "sk_sandbox_process_books_0001";

// `moneyq sandbox` in its own process, its flags as a user gives them.
const sandbox = useSandboxProcess([
  "--settle-delay-ms",
  String(SETTLE),
  "--reverse-after-ms",
  String(2 * DAY),
  "--reversal-style",
  "status",
  "--reversed-status",
  "RETURNED",
]);

const api = (method: string, path: string, o: Parameters<typeof call>[2] = {}) =>
  call(`${sandbox.baseUrl}${path}`, method, { key: KEY, ...o });
const control = (method: string, path: string, o: Parameters<typeof call>[2] = {}) =>
  call(`${sandbox.controlUrl}${path}`, method, o);
const advance = (ms: number) => control("POST", "/clock/advance", { body: { ms } });

describe("moneyq sandbox --reverse-after-ms --reversal-style --reversed-status", () => {
  it("reverses 0000000003 days after success, as a status change with the given word", async () => {
    await sandbox.addAccount("acct_books", KEY);
    const paid = await api("POST", "/transaction/transfer/bank", {
      idem: "process-books-1",
      body: bankPayout(100, "0000000003"),
    });
    const id = paid.body.data.transactionId;
    await advance(SETTLE + 2 * DAY - MINUTE);
    expect((await api("GET", `/transactions/${id}`)).body.data.status).toBe("SUCCESSFUL");
    await advance(MINUTE);
    expect((await api("GET", `/transactions/${id}`)).body.data.status).toBe("RETURNED");

    const other = await api("POST", "/transaction/transfer/bank", {
      idem: "process-books-2",
      body: bankPayout(200),
    });
    await advance(SETTLE);
    const reversed = await control(
      "POST",
      `/transactions/${other.body.data.transactionId}/reverse`,
      {
        body: { as: "transaction" },
      },
    );
    expect(reversed.status, JSON.stringify(reversed.body)).toBe(200);
    expect(reversed.body.data.reversal).toMatchObject({ type: "CREDIT", amount: 200 });
    const invariants = await control("GET", "/invariants");
    expect(invariants.body.data).toEqual({ ok: true, violations: [] });
    // The Payments API saw four requests; the control calls are not among them.
    expect((await sandbox.requests("acct_books")).map((r) => r.method)).toEqual([
      "POST",
      "GET",
      "GET",
      "POST",
    ]);
  });

  it("refuses a bad flag with exit code 2 and the rule; --help names the new flags", async () => {
    const word = await runCli(["sandbox", "--reversed-status", "COMPLETED"]);
    expect(word.code).toBe(2);
    expect(word.stderr).toContain("must be 1 to 64 letters, digits, _ or -");
    const style = await runCli(["sandbox", "--reversal-style", "sideways"]);
    expect(style.code).toBe(2);
    expect(style.stderr).toContain("Allowed choices are transaction, status");
    const delay = await runCli(["sandbox", "--reverse-after-ms", "-5"]);
    expect(delay.code).toBe(2);
    expect(delay.stderr).toContain("must be a whole number from 0 to 31536000000");
    const help = await runCli(["sandbox", "--help"]);
    for (const flag of ["--reverse-after-ms", "--reversal-style", "--reversed-status"])
      expect(help.stdout).toContain(flag);
  });
});
