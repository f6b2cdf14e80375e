import { describe, expect, it } from "vitest";
import {
  ALPHA_TOKEN,
  BETA_TOKEN,
  BOTH_TOKEN,
  bankJob,
  type LogLine,
  useLoggedService,
} from "../helpers/logged-service.js";
import { until } from "../helpers/service.js";

const h = useLoggedService();

const auditLines = () => h.lines.filter((l) => l.audit !== undefined);

/** The audit lines `call` wrote: exactly one is expected of each mutating call. */
async function audited(call: () => Promise<{ status: number }>): Promise<LogLine[]> {
  const before = auditLines().length;
  const answer = await call();
  // onResponse runs once the answer is written: a moment after the client has it.
  await until(
    async () => auditLines().length,
    (n) => n > before,
    5_000,
  ).catch(() => undefined);
  const lines = auditLines().slice(before);
  expect(lines, `status ${answer.status}`).toHaveLength(1);
  return lines;
}

describe("an audit line for each mutating call", () => {
  it("enqueue, batch submit, cancel, replay, pause and resume: token name, account, route and ids, never the token", async () => {
    let jobId = "";
    const [enqueue] = await audited(async () => {
      const r = await h.api("POST", "/v1/jobs", {
        body: bankJob({ idempotencyKey: "audit-1" }, { accountNumber: "0000000001" }),
      });
      jobId = r.body.jobId;
      return r;
    });
    expect(enqueue).toMatchObject({
      level: 30,
      audit: "enqueue",
      token: "alpha-ops",
      account: "alpha",
      route: "POST /v1/jobs",
      status: 202,
      jobId,
      idempotencyKey: "audit-1",
    });

    const csv =
      "reference,amount,currency,bankCode,accountNumber,accountName,bankName\nr1,10,NGN,044,0123456789,Ada,Access\n";
    // A token of two accounts that names none: refused, and audited as tried.
    const [submit] = await audited(() =>
      h.api("POST", "/v1/batches?kind=payout.bank&batchId=audit-batch", {
        token: BOTH_TOKEN,
        type: "text/csv",
        body: csv,
      }),
    );
    expect(submit).toMatchObject({ audit: "batch_submit", token: "both", status: 400 });

    const [submitted] = await audited(() =>
      h.api("POST", "/v1/batches?kind=payout.bank&batchId=audit-batch&account=beta", {
        token: BOTH_TOKEN,
        type: "text/csv",
        body: csv,
      }),
    );
    expect(submitted).toMatchObject({
      audit: "batch_submit",
      token: "both",
      account: "beta",
      route: "POST /v1/batches",
      status: 202,
      batchId: "audit-batch",
      created: true,
      accepted: 1,
    });

    const [cancel] = await audited(() =>
      h.api("POST", "/v1/batches/audit-batch/cancel", { token: BETA_TOKEN }),
    );
    expect(cancel).toMatchObject({
      audit: "batch_cancel",
      token: "beta-ops",
      route: "POST /v1/batches/:batchId/cancel",
      batchId: "audit-batch",
    });

    await until(
      () => h.api("GET", "/v1/dead-letters?limit=50"),
      (r) => r.body.deadLetters.some((d: { jobId: string }) => d.jobId === jobId),
    );
    const [replay] = await audited(() => h.api("POST", `/v1/dead-letters/${jobId}/replay`));
    expect(replay).toMatchObject({
      audit: "dead_letter_replay",
      token: "alpha-ops",
      account: "alpha",
      route: "POST /v1/dead-letters/:jobId/replay",
      status: 202,
      jobId,
    });

    const [pause] = await audited(() =>
      h.api("POST", "/v1/accounts/alpha/pause", { body: { reason: "audit test" } }),
    );
    expect(pause).toMatchObject({
      audit: "account_pause",
      token: "alpha-ops",
      account: "alpha",
      route: "POST /v1/accounts/:alias/pause",
      status: 200,
    });
    const [resume] = await audited(() => h.api("POST", "/v1/accounts/alpha/resume"));
    expect(resume).toMatchObject({ audit: "account_resume", account: "alpha", status: 200 });

    // A refused call is audited too, naming what was tried.
    const [forbidden] = await audited(() =>
      h.api("POST", "/v1/accounts/beta/pause", { token: ALPHA_TOKEN }),
    );
    expect(forbidden).toMatchObject({ audit: "account_pause", account: "beta", status: 403 });

    const text = h.lines.map((l) => JSON.stringify(l)).join("\n");
    for (const token of [ALPHA_TOKEN, BETA_TOKEN, BOTH_TOKEN]) expect(text).not.toContain(token);
    // Reads are not audited: after them, a mutating call's line is the only new one.
    const lines = await audited(async () => {
      await h.api("GET", "/v1/accounts");
      await h.api("GET", `/v1/jobs/${jobId}`);
      return h.api("POST", "/v1/accounts/alpha/resume");
    });
    expect(lines[0]).toMatchObject({ audit: "account_resume" });
  });

  it("a call refused for its token (401) is audited with the route and remote address; a 409 names the job", async () => {
    const [refused] = await audited(() =>
      h.api("POST", "/v1/jobs", {
        token: "not-a-token",
        body: bankJob({ idempotencyKey: "a-401" }),
      }),
    );
    expect(refused).toMatchObject({
      audit: "enqueue",
      route: "POST /v1/jobs",
      status: 401,
      remoteAddress: expect.stringMatching(/127\.0\.0\.1/),
    });
    expect(refused?.token).toBeUndefined();
    expect(JSON.stringify(refused)).not.toContain("not-a-token");

    const [first] = await audited(() =>
      h.api("POST", "/v1/jobs", { body: bankJob({ idempotencyKey: "audit-409" }) }),
    );
    const [conflict] = await audited(() =>
      h.api("POST", "/v1/jobs", {
        body: bankJob({ idempotencyKey: "audit-409" }, { amount: 999 }),
      }),
    );
    expect(conflict).toMatchObject({
      audit: "enqueue",
      status: 409,
      jobId: first?.jobId,
      idempotencyKey: "audit-409",
    });
  });
});
