import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { bankJob } from "../fixtures/batches.js";
import { useBrowser } from "../helpers/browser.js";
import { bankCsv, useService } from "../helpers/service.js";

const MAKER = "tok_console_maker_0123456789";
const CHECKER = "tok_console_checker_01234567";
const VIEWER = "tok_console_viewer_012345678";

// Every batch of alpha waits for a second person's approval; beta sends one KES payout an hour.
const h = useService({
  MONEYQ_VELOCITY_LIMITS: JSON.stringify([
    { account: "beta", currency: "KES", perHour: { count: 1 } },
  ]),
  MONEYQ_API_TOKENS: JSON.stringify([
    {
      name: "maker",
      token: MAKER,
      accounts: ["alpha", "beta"],
      permissions: ["submit", "read", "operate"],
    },
    { name: "checker", token: CHECKER, accounts: ["alpha", "beta"] },
    { name: "viewer", token: VIEWER, accounts: ["alpha"], permissions: ["read", "submit"] },
  ]),
  MONEYQ_APPROVAL_POLICIES: JSON.stringify([{ account: "alpha", batches: "all" }]),
});
const browser = useBrowser();

/** The screenshots docs/console.md shows, written anew by each run. */
const SHOTS = join(import.meta.dirname, "../../docs/console");
const shot = (page: Page, name: string) =>
  page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

async function signIn(page: Page, token: string): Promise<void> {
  await page.goto(`${h.service().apiUrl}/console`);
  await page.fill("#token", token);
  await page.click("#sign-in button[type=submit]");
  await page.waitForSelector("nav .who");
}

/** A CSV of `rows` bank payouts; rows 2 and 4 broken when `broken`. */
function payroll(rows: number, broken: boolean): string {
  return bankCsv("pay", rows, (n, cells) => {
    if (!broken) return;
    if (n === 2) cells.amount = "twelve";
    if (n === 4) cells.bankCode = "";
  });
}

async function upload(page: Page, csv: string): Promise<void> {
  await page.click("a[href='#/upload']");
  await page.selectOption("#kind", "payout.bank");
  await page.selectOption("#account", "alpha");
  await page.setInputFiles("#file", {
    name: "payroll.csv",
    mimeType: "text/csv",
    buffer: Buffer.from(csv),
  });
  await page.click("#upload button[type=submit]");
  await page.waitForSelector("#dry-run-summary, .error");
}

/** The texts of each body row of the table `selector`, cell by cell. */
const rowsOf = (page: Page, selector: string) =>
  page.$$eval(`${selector} tbody tr`, (trs) =>
    trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent?.trim() ?? "")),
  );

/** Asks the API from inside the page, with the token the page signed in with. */
const fromPage = (page: Page, method: string, path: string) =>
  page.evaluate(
    async ([m, p]) => {
      // Runs in the page, where session storage is (the test's types have no DOM).
      type Storage = { getItem(key: string): string | null };
      const { sessionStorage } = globalThis as unknown as { sessionStorage: Storage };
      const token = sessionStorage.getItem("moneyq.token");
      const answer = await fetch(p as string, {
        method: m as string,
        headers: { authorization: `Bearer ${token ?? ""}` },
      });
      return {
        status: answer.status,
        body: (await answer.json()) as { error: { message: string } },
      };
    },
    [method, path],
  );

describe("the operator console in a real Chromium", () => {
  let batchId = "";

  it("signs in, and a file with two bad rows shows both with their columns before anything is enqueued", async () => {
    const page = await browser.page();
    await page.goto(`${h.service().apiUrl}/console`);
    await page.waitForSelector("#token");
    await shot(page, "sign-in");
    await signIn(page, MAKER);
    expect(await page.textContent("nav .who")).toBe("maker");
    // The token is in the tab's session storage, never in the address or a cookie.
    expect(page.url()).not.toContain(MAKER);
    expect(await page.context().cookies()).toEqual([]);

    await upload(page, payroll(6, true));
    expect(await page.textContent("#dry-run-summary")).toContain("6 rows: 4 valid, 2 invalid");
    const issues = await rowsOf(page, "#issues");
    expect(issues.map(([row, , column]) => [row, column])).toEqual([
      ["2", "amount"],
      ["4", "bankCode"],
    ]);
    await shot(page, "upload");
    const batches = await h.api("GET", "/v1/batches?account=alpha", { token: MAKER });
    expect(batches.body.batches).toEqual([]);
    expect((await h.sb.control("GET", "/requests")).body.data.requests).toHaveLength(0);
    await page.context().close();
  });

  it("the fixed file is submitted and waits; a second token approves; progress reaches completed", async () => {
    const page = await browser.page();
    await signIn(page, MAKER);
    await upload(page, payroll(6, false));
    expect(await page.textContent("#dry-run-summary")).toContain("6 rows: 6 valid, 0 invalid");
    await page.click("#submit");
    await page.waitForSelector("#facts");
    batchId = decodeURIComponent(page.url().split("/").at(-1) as string);
    await page.waitForSelector(".state-awaiting_approval");
    // The submitter is not offered the decision.
    expect(await page.$("#approve")).toBeNull();
    expect((await h.sb.control("GET", "/requests")).body.data.requests).toHaveLength(0);
    await page.context().close();

    const checker = await browser.page();
    await signIn(checker, CHECKER);
    await checker.waitForSelector(`a:has-text("${batchId}")`);
    await shot(checker, "batches");
    await checker.click(`a:has-text("${batchId}")`);
    await checker.waitForSelector("#approve");
    await shot(checker, "approval");
    await checker.click("#approve");
    await checker.waitForSelector(".state-completed", { timeout: 30_000 });
    const counts = Object.fromEntries(await rowsOf(checker, "#counts"));
    expect(counts.succeeded).toBe("6");
    expect(await checker.textContent("#failures")).toContain("None so far");
    await shot(checker, "batch");

    // The report the page downloads is the API's.
    const [download] = await Promise.all([
      checker.waitForEvent("download"),
      checker.click("#download-csv"),
    ]);
    const saved = await readFile((await download.path()) as string, "utf8");
    const api = await h.api("GET", `/v1/batches/${batchId}/results?format=csv`, { token: CHECKER });
    expect(download.suggestedFilename()).toBe(`${batchId}.csv`);
    expect(saved).toBe(api.text);
    expect(saved.split("\n").filter((l) => l.includes(",succeeded,"))).toHaveLength(6);
    await checker.context().close();
  });

  it("a file paying again what the approved batch paid, under new references: the dry run names each row with that batch and row", async () => {
    const page = await browser.page();
    await signIn(page, MAKER);
    await upload(page, bankCsv("pay-again", 6));
    expect(await page.textContent("#dry-run-summary")).toContain("6 rows: 6 valid, 0 invalid");
    expect(await page.textContent("#repeats-summary")).toContain(
      "6 rows repeat a payment of the last 7 days (policy warn",
    );
    const repeats = await rowsOf(page, "#repeats");
    expect(repeats.map(([row, reference]) => [row, reference])).toEqual(
      [1, 2, 3, 4, 5, 6].map((n) => [String(n), `pay-again-${n}`]),
    );
    for (const [row, , repeated] of repeats)
      expect(repeated).toContain(`batch ${batchId}, row ${row}`);
    await page.context().close();
  });

  it("a stable batch's dry run shows what each currency needs against the provider's balance", async () => {
    const [sub] = h.sb.sandbox.control.accounts().find((a) => a.accountId === "acct_beta")
      ?.subAccountIds ?? [""];
    const to = "TJRabPrwbZy45sbavfcjinPJC18kjpRTv8";
    // The sandbox holds 100,000 of each stable currency on each network.
    const csv = [
      "reference,subAccountId,amount,toAddress,currency,network",
      `s-1,${sub},60000,${to},USDT,polygon`,
      `s-2,${sub},60000.5,${to},USDT,polygon`,
      `s-3,${sub},25,${to},USDC,base`,
    ].join("\n");
    const page = await browser.page();
    await signIn(page, MAKER);
    await page.click("a[href='#/upload']");
    await page.selectOption("#kind", "payout.stable");
    await page.selectOption("#account", "beta");
    await page.setInputFiles("#file", {
      name: "stable.csv",
      mimeType: "text/csv",
      buffer: Buffer.from(csv),
    });
    await page.click("#upload button[type=submit]");
    await page.waitForSelector("#funds-summary");
    expect(await page.textContent("#funds-summary")).toContain(
      "short (verified: read from the provider's balance)",
    );
    expect(await rowsOf(page, "#funds")).toEqual([
      [sub, "USDT on polygon", "2", "120000.5", "100000", "short by 20000.5"],
      [sub, "USDC on base", "1", "25", "100000", "enough"],
    ]);
    await page.context().close();
  });

  it("a dead letter is found by its reference and replayed, with the answer shown", async () => {
    const job = await h.api("POST", "/v1/jobs", {
      token: MAKER,
      // 666.66 is the sandbox's magic amount that fails.
      body: bankJob(
        { account: "beta", reference: "console-dl-1", idempotencyKey: "console-dead-letter-0001" },
        { amount: 666.66 },
      ),
    });
    expect(job.status).toBe(202);
    await expect
      .poll(
        async () =>
          (await h.api("GET", "/v1/dead-letters?account=beta", { token: MAKER })).body.deadLetters
            .length,
        { timeout: 20_000 },
      )
      .toBe(1);
    const sentBefore = (await h.sb.control("GET", "/requests")).body.data.requests.length;

    const page = await browser.page();
    await signIn(page, MAKER);
    await page.click("a[href='#/dead-letters']");
    await page.selectOption("#dl-account", "beta");
    await page.fill("#dl-term", "console-dl-1");
    await page.click("#dl-search button[type=submit]");
    await page.waitForSelector(".dead-letters");
    const rows = await rowsOf(page, ".dead-letters");
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain(job.body.jobId);
    expect(rows[0]).toContain("console-dl-1");
    await page.click(".dead-letters tbody tr input[type=checkbox]");
    await page.click("#replay-selected");
    await page.waitForSelector(".answer.ok");
    expect(await page.textContent(".answer.ok")).toBe("replayed");
    await shot(page, "dead-letters");
    // The replay sent the same job again, under the same key.
    await expect
      .poll(async () => {
        const { requests } = (await h.sb.control("GET", "/requests")).body.data;
        return requests
          .slice(sentBefore)
          .filter(
            (r: { idempotencyKey?: string }) => r.idempotencyKey === "console-dead-letter-0001",
          ).length;
      })
      .toBeGreaterThan(0);
    await page.context().close();
  });

  it("an account is paused with a reason and resumed", async () => {
    const page = await browser.page();
    await signIn(page, MAKER);
    await page.click("a[href='#/accounts']");
    const beta = page.locator(".accounts tbody tr", { hasText: "beta" });
    await beta.locator("input.reason").fill("bank holiday");
    await beta.locator("button.pause").click();
    await page.waitForSelector(".notice");
    expect(await beta.textContent()).toContain("Paused (by an operator): bank holiday");
    const paused = await h.api("GET", "/v1/accounts", { token: MAKER });
    expect(paused.body.accounts.find((a: { alias: string }) => a.alias === "beta")).toMatchObject({
      paused: true,
      pause: { reason: "bank holiday", cause: "operator" },
    });
    await shot(page, "accounts");
    await beta.locator("button.resume").click();
    await expect.poll(async () => beta.textContent()).toContain("Running");
    const resumed = await h.api("GET", "/v1/accounts", { token: MAKER });
    expect(resumed.body.accounts.find((a: { alias: string }) => a.alias === "beta").paused).toBe(
      false,
    );
    await page.context().close();
  });

  it("held currency lanes show with their controls: a velocity hold released by a second person, a lane held for want of funds resumed, then its work cancelled", async () => {
    const enqueue = async (key: string, body: Record<string, unknown>) =>
      (
        await h.api("POST", "/v1/jobs", {
          token: MAKER,
          body: { ...bankJob({ idempotencyKey: key }, body), account: "beta" },
        })
      ).body.jobId as string;
    const resultOf = (jobId: string) =>
      expect.poll(
        async () => (await h.api("GET", `/v1/jobs/${jobId}`, { token: MAKER })).body.result?.result,
        { timeout: 20_000 },
      );
    await resultOf(await enqueue("console-kes-1", { currency: "KES" })).toBe("succeeded");
    const second = await enqueue("console-kes-2", { currency: "KES" });
    const poor = await enqueue("console-ghs-poor", {
      currency: "GHS",
      accountNumber: "0000000004",
    });
    const heldLanes = () =>
      expect.poll(
        async () =>
          (await h.api("GET", "/v1/accounts/beta/holds", { token: CHECKER })).body.holds
            .filter((x: { jobIds: string[] }) => x.jobIds.length > 0)
            .map((x: { cause: string }) => x.cause)
            .sort(),
        { timeout: 20_000 },
      );
    await heldLanes().toEqual(["insufficient_funds", "velocity"]);

    const page = await browser.page();
    await signIn(page, CHECKER);
    await page.click("a[href='#/accounts']");
    const velocity = page.locator(".lane-holds tbody tr", { hasText: "Velocity limit reached" });
    await velocity.waitFor();
    expect(await velocity.textContent()).toContain("KES");
    const funds = page.locator(".lane-holds tbody tr", { hasText: "Insufficient funds" });
    expect(await funds.count()).toBe(1);
    // Each lane offers the end its cause allows: a velocity hold no resume, a funds hold no release.
    expect(await velocity.locator("button.resume").count()).toBe(0);
    expect(await funds.locator("button.release").count()).toBe(0);
    await shot(page, "lane-holds");
    await velocity.locator("button.release").click();
    await page.waitForSelector(".notice");
    expect(await page.textContent(".notice")).toContain("beta KES: 1 held job(s) released.");
    await resultOf(second).toBe("succeeded");

    const maker = await browser.page();
    await signIn(maker, MAKER);
    await maker.click("a[href='#/accounts']");
    const held = maker.locator(".lane-holds tbody tr", { hasText: "Insufficient funds" });
    await held.locator("button.resume").click();
    await maker.waitForSelector(".notice");
    expect(await maker.textContent(".notice")).toContain("beta GHS: 1 held job(s) resumed.");
    // The sandbox refuses this payout whatever the balance: it holds the lane again.
    await heldLanes().toEqual(["insufficient_funds"]);
    const later = await browser.page();
    await signIn(later, CHECKER);
    await later.click("a[href='#/accounts']");
    const heldAgain = later.locator(".lane-holds tbody tr", { hasText: "Insufficient funds" });
    await heldAgain.locator("button.cancel").click();
    await later.waitForSelector(".notice");
    await resultOf(poor).toBe("cancelled");
    await page.context().close();
    await later.context().close();
    await maker.context().close();
  });

  it("a token without operate sees no cancel, replay or pause control, and the API refuses them anyway", async () => {
    const page = await browser.page();
    await signIn(page, VIEWER);
    await upload(page, bankCsv("viewer", 2));
    await page.click("#submit");
    await page.waitForSelector(".state-awaiting_approval");
    const held = decodeURIComponent(page.url().split("/").at(-1) as string);
    await page.waitForSelector("#download-csv");
    expect(await page.$("#cancel")).toBeNull();
    expect(await page.$("#approve")).toBeNull();

    await page.click("a[href='#/dead-letters']");
    await page.waitForSelector("#dead-letter-list");
    expect(await page.$("#replay-selected")).toBeNull();
    expect(await page.$("button.replay")).toBeNull();
    await page.click("a[href='#/accounts']");
    await page.waitForSelector(".accounts");
    expect(await page.$("button.pause")).toBeNull();

    const cancel = await fromPage(page, "POST", `/v1/batches/${held}/cancel`);
    expect(cancel.status).toBe(403);
    expect(cancel.body.error.message).toContain('lacks the "operate" permission');
    const pause = await fromPage(page, "POST", "/v1/accounts/alpha/pause");
    expect(pause.status).toBe(403);
    await page.context().close();

    // The same batch offers cancel to a token that may operate.
    const maker = await browser.page();
    await signIn(maker, MAKER);
    await maker.goto(`${h.service().apiUrl}/console#/batch/alpha/${held}`);
    await maker.waitForSelector("#cancel");
    await maker.context().close();
  });
});
