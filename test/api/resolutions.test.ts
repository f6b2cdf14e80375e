import { describe, expect, it } from "vitest";
import { bankJob } from "../fixtures/batches.js";
import { ALPHA_TOKEN, BETA_TOKEN, jobFinished, until, useService } from "../helpers/service.js";

// A payout the sandbox leaves PENDING forever (0000000002) ends needs_reconciliation once its
// short confirmation deadline passes. Beta's policy asks a second person to approve a
// resolution by hand.
const READER = "tok_alpha_reader_0123456789";
const CHECKER = "tok_beta_checker_0123456789";
const h = useService({
  MONEYQ_CONFIRM_DEADLINE_MS: "600",
  MONEYQ_API_TOKENS: JSON.stringify([
    { name: "alpha-ops", token: ALPHA_TOKEN, accounts: ["alpha"] },
    { name: "alpha-reader", token: READER, accounts: ["alpha"], permissions: ["read", "submit"] },
    { name: "beta-ops", token: BETA_TOKEN, accounts: ["beta"] },
    { name: "beta-checker", token: CHECKER, accounts: ["beta"] },
  ]),
  MONEYQ_APPROVAL_POLICIES: JSON.stringify([{ account: "beta", resolutions: "second_person" }]),
});

/** A payout of `account` that ends needs_reconciliation (confirm_deadline); its job id. */
async function unknownPayout(token: string, key: string): Promise<string> {
  const body = bankJob({ idempotencyKey: key }, { accountNumber: "0000000002" });
  const enqueued = await h.api("POST", "/v1/jobs", { token, body });
  expect(enqueued.status).toBe(202);
  const done = await jobFinished(h, enqueued.body.jobId, token);
  expect(done.body.result.result).toBe("needs_reconciliation");
  return enqueued.body.jobId;
}

const resolve = (token: string, jobId: string, body: unknown) =>
  h.api("POST", `/v1/jobs/${jobId}/resolve`, { token, body });

describe("resolving an exception by hand, with evidence", () => {
  it("needs operate; records the resolution once, as an event and in the audit trail", async () => {
    const jobId = await unknownPayout(ALPHA_TOKEN, "resolve-alpha-1");
    const body = {
      result: "succeeded",
      note: "paid: seen in the provider's portal",
      upstreamId: "txn_x",
    };
    expect((await resolve(READER, jobId, body)).status).toBe(403);
    const done = await resolve(ALPHA_TOKEN, jobId, body);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({
      state: "resolved",
      resolution: {
        to: "succeeded",
        from: "needs_reconciliation",
        upstreamId: "txn_x",
        resolver: { by: "operator", name: "alpha-ops" },
      },
    });
    const again = await resolve(ALPHA_TOKEN, jobId, body);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("already_resolved");

    const status = await h.api("GET", `/v1/jobs/${jobId}`);
    expect(status.body.result.result).toBe("needs_reconciliation");
    expect(status.body.resolution.to).toBe("succeeded");
    const trail = await h.api("GET", "/v1/resolutions?account=alpha");
    expect(trail.body.resolutions.filter((r: { jobId: string }) => r.jobId === jobId)).toHaveLength(
      1,
    );
    const events = (await h.streamEntries())
      .map(([, f]) => JSON.parse(f[f.indexOf("event") + 1] as string))
      .filter((e) => e.type === "job.resolved" && e.data.jobId === jobId);
    expect(events).toHaveLength(1);
    expect(events[0].data.resolution.note).toBe("paid: seen in the provider's portal");
  });

  it("under a policy of two people, waits for a second person, and never the one who asked", async () => {
    const jobId = await unknownPayout(BETA_TOKEN, "resolve-beta-1");
    const asked = await resolve(BETA_TOKEN, jobId, {
      result: "failed",
      note: "refunded per the bank",
    });
    expect(asked.status).toBe(202);
    expect(asked.body).toMatchObject({
      state: "awaiting_approval",
      request: { requestedBy: "beta-ops" },
    });
    const own = await h.api("POST", `/v1/jobs/${jobId}/resolve/approve`, { token: BETA_TOKEN });
    expect(own.status).toBe(403);
    expect(own.body.error.code).toBe("own_resolution");
    const approved = await h.api("POST", `/v1/jobs/${jobId}/resolve/approve`, { token: CHECKER });
    expect(approved.status).toBe(200);
    expect(approved.body.resolution).toMatchObject({
      to: "failed",
      resolver: { by: "operator", name: "beta-ops", approvedBy: "beta-checker" },
    });
    const trail = await h.api("GET", "/v1/resolutions?account=beta", { token: BETA_TOKEN });
    expect(trail.body.resolutions.filter((r: { jobId: string }) => r.jobId === jobId)).toHaveLength(
      1,
    );
  });

  it("refuses a job that succeeded, and one of another account", async () => {
    const enqueued = await h.api("POST", "/v1/jobs", {
      body: bankJob({ idempotencyKey: "resolve-ok" }),
    });
    await until(
      () => h.api("GET", `/v1/jobs/${enqueued.body.jobId}`),
      (r) => r.body?.result?.result === "succeeded",
    );
    const refused = await resolve(ALPHA_TOKEN, enqueued.body.jobId, {
      result: "failed",
      note: "x",
    });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("not_resolvable");
    expect(
      (await resolve(BETA_TOKEN, enqueued.body.jobId, { result: "failed", note: "x" })).status,
    ).toBe(404);
  });
});
