import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { ALPHA_TOKEN, bankCsv, batchFinished, useService } from "../helpers/service.js";

const CHECKER_TOKEN = "tok_alpha_checker_0123456789";
const CLERK_TOKEN = "tok_alpha_clerk_01234567890";

// Every alpha batch waits for approval.
const h = useService({
  MONEYQ_API_TOKENS: JSON.stringify([
    { name: "alpha-ops", token: ALPHA_TOKEN, accounts: ["alpha"] },
    { name: "alpha-checker", token: CHECKER_TOKEN, accounts: ["alpha"] },
    { name: "alpha-clerk", token: CLERK_TOKEN, accounts: ["alpha"], permissions: ["read"] },
  ]),
  MONEYQ_APPROVAL_POLICIES: JSON.stringify([{ account: "alpha", batches: "all" }]),
});
const cli = (args: string[]) => runCli(args, h.env());

let dir = "";
const tokenFile = async (name: string, token: string) => {
  const file = join(dir, name);
  await writeFile(file, `${token}\n`);
  return file;
};
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "moneyq-approve-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("moneyq batch approve|reject", { timeout: 60_000 }, () => {
  it("approves with another token's file, never the submitter's or one without approve", async () => {
    const submitted = await h.api("POST", "/v1/batches?kind=payout.bank&batchId=cli-approve", {
      token: ALPHA_TOKEN,
      csv: bankCsv("cliappr", 3),
    });
    expect(submitted.status).toBe(202);

    const own = await cli([
      "batch",
      "approve",
      "cli-approve",
      "--token-file",
      await tokenFile("own", ALPHA_TOKEN),
    ]);
    expect(own.code).not.toBe(0);
    expect(own.stderr).toContain("submitted by this token");
    const clerk = await cli([
      "batch",
      "approve",
      "cli-approve",
      "--token-file",
      await tokenFile("clerk", CLERK_TOKEN),
    ]);
    expect(clerk.code).not.toBe(0);
    expect(clerk.stderr).toContain('token alpha-clerk lacks the "approve" permission');
    const unknown = await cli([
      "batch",
      "approve",
      "cli-approve",
      "--token-file",
      await tokenFile("x", "tok_unknown_0123456789abc"),
    ]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain("no token configured");
    expect(unknown.stderr).not.toContain("tok_unknown");

    const approved = await cli([
      "batch",
      "approve",
      "cli-approve",
      "--token-file",
      await tokenFile("checker", CHECKER_TOKEN),
    ]);
    expect(approved.stderr).toBe("");
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain(
      "batch cli-approve approved by alpha-checker: 3 jobs released",
    );
    expect(approved.stdout).toMatch(/approval\s+approved by alpha-checker/);
    const done = await batchFinished(h, ALPHA_TOKEN, "cli-approve");
    expect(done.body).toMatchObject({ state: "completed", counts: { succeeded: 3 } });
    const status = await cli(["batch", "status", "cli-approve"]);
    expect(status.stdout).toMatch(/NGN\s+3 \/ 306\s+0 \/ 0\s+3 \/ 306/);
  });

  it("rejects: every row ends cancelled", async () => {
    await h.api("POST", "/v1/batches?kind=payout.bank&batchId=cli-reject", {
      token: ALPHA_TOKEN,
      csv: bankCsv("clirej", 2),
    });
    const rejected = await cli([
      "batch",
      "reject",
      "cli-reject",
      "--json",
      "--token-file",
      await tokenFile("checker2", CHECKER_TOKEN),
    ]);
    expect(rejected.code).toBe(0);
    expect(JSON.parse(rejected.stdout)).toMatchObject({
      jobs: 2,
      status: { state: "cancelled", cancelReason: "rejected", counts: { cancelled: 2 } },
    });
  });

  it("submits with --not-before: scheduled, submitted by cli, approvable by any token", async () => {
    const file = join(dir, "later.csv");
    await writeFile(file, bankCsv("clilater", 2));
    const notBefore = new Date(Date.now() + 60_000).toISOString();
    const submitLater = (when: string, ...more: string[]) =>
      cli([
        "batch",
        "submit",
        file,
        "--kind",
        "payout.bank",
        "--account",
        "alpha",
        "--not-before",
        when,
        ...more,
      ]);
    const bad = await submitLater("soon");
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("--not-before: must be an ISO 8601 time with its offset");
    const far = await submitLater("2099-01-01T00:00:00Z");
    // The rule, not a stack trace.
    expect(far.code).toBe(2);
    expect(far.stderr).toContain("notBefore: at most 366 days ahead");
    expect(far.stderr).not.toMatch(/\bat \S+ \(/);
    const submitted = await submitLater(notBefore, "--batch-id", "cli-later", "--json");
    expect(submitted.code).toBe(0);
    expect(JSON.parse(submitted.stdout).status).toMatchObject({
      submittedBy: "cli",
      notBefore,
      approval: { state: "pending" },
    });
    const approved = await cli([
      "batch",
      "approve",
      "cli-later",
      "--json",
      "--token-file",
      await tokenFile("ops", ALPHA_TOKEN),
    ]);
    expect(approved.code).toBe(0);
    expect(JSON.parse(approved.stdout).status).toMatchObject({ state: "scheduled", notBefore });
    await cli(["batch", "cancel", "cli-later"]);
  });
});
