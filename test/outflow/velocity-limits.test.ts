import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exitOf, spawnWorker } from "../helpers/cli.js";
import { useTestRedis } from "../helpers/redis.js";
import { useSandboxProcess } from "../helpers/sandbox-process.js";
import { bankCsv, until } from "../helpers/service.js";
import {
  processApi,
  type ServiceProcess,
  startServiceProcess,
} from "../helpers/service-process.js";

// Three worker processes (a service and two more) share two accounts; the sandbox in its own
// process counts what was sent. `vel` may send 10,000 NGN an hour; `ben` may pay one
// beneficiary 300 NGN a day. Whoever submits may also approve, so that a refusal of their
// release is the rule "not by the submitter", not a missing permission.
const sandbox = useSandboxProcess(["--settle-delay-ms", "20"]);
const redis = useTestRedis("velocity");
const KEYS = { vel: "sk_sandbox_velocity_0001", ben: "sk_sandbox_velocity_0002" };
const TOKENS = {
  submitter: "tok_vel_submitter_0123456789",
  approver: "tok_vel_approver_012345678",
};
let service: ServiceProcess | undefined;
const workers: ChildProcess[] = [];

const env = () => ({
  REDIS_URL: redis.url,
  MONEYQ_REDIS_PREFIX: redis.prefix,
  PAYMENTS_API_URL: sandbox.baseUrl,
  MONEYQ_ACCOUNTS: JSON.stringify([
    { alias: "vel", apiKey: KEYS.vel, ratePerSecond: 100, concurrency: 8 },
    { alias: "ben", apiKey: KEYS.ben, ratePerSecond: 100, concurrency: 8 },
  ]),
  MONEYQ_API_TOKENS: JSON.stringify([
    {
      name: "submitter",
      token: TOKENS.submitter,
      accounts: ["vel", "ben"],
      permissions: ["submit", "read", "approve"],
    },
    {
      name: "approver",
      token: TOKENS.approver,
      accounts: ["vel", "ben"],
      permissions: ["read", "approve"],
    },
  ]),
  MONEYQ_VELOCITY_LIMITS: JSON.stringify([
    { account: "vel", currency: "NGN", perHour: { amount: "10000" } },
    { account: "ben", currency: "NGN", perBeneficiaryPerDay: { amount: "300" } },
  ]),
  MONEYQ_RECHECK_AFTER: "off",
});

const api = (token: string, method: string, path: string, body?: string, type?: string) =>
  processApi(() => service, token)(method, path, body, type);

async function submitBatch(account: string, csv: string): Promise<string> {
  const res = await api(
    TOKENS.submitter,
    "POST",
    `/v1/batches?kind=payout.bank&account=${account}`,
    csv,
  );
  expect(res.status, res.text).toBe(202);
  return res.json().batchId as string;
}

const posts = async (accountId: string) =>
  (await sandbox.requests(accountId)).filter((r) => r.method === "POST");

async function heldJobs(account: string): Promise<string[]> {
  const res = await api(TOKENS.approver, "GET", `/v1/accounts/${account}/holds`);
  expect(res.status, res.text).toBe(200);
  const holds = res.json().holds as { cause: string; currency: string; jobIds: string[] }[];
  return holds.filter((h) => h.cause === "velocity").flatMap((h) => h.jobIds);
}

async function events(account: string, type: string) {
  return (await redis.resultEntries([account]))
    .filter(([, fields]) => fields[0] === "event")
    .map(([, fields]) => JSON.parse(fields[1] as string))
    .filter((e) => e.type === type && e.data.account === account);
}

async function results(account: string) {
  return (await redis.resultEntries([account]))
    .filter(([, fields]) => fields[0] === "result")
    .map(([, fields]) => JSON.parse(fields[1] as string))
    .filter((r) => r.account === account);
}

beforeAll(async () => {
  await sandbox.addAccount("acct_velocity", KEYS.vel);
  await sandbox.addAccount("acct_beneficiary", KEYS.ben);
  service = await startServiceProcess(env());
  for (let i = 0; i < 2; i += 1) workers.push((await spawnWorker(env())).child);
}, 60_000);
afterAll(async () => {
  for (const w of workers) {
    w.kill("SIGTERM");
    await exitOf(w);
  }
  await service?.stop();
});

describe("velocity limits, where a request leaves", () => {
  it("sends exactly what an hour's amount allows, holds the rest once, and lets an approver release it once", async () => {
    await submitBatch(
      "vel",
      bankCsv("vel", 300, (_n, c) => Object.assign(c, { amount: "100" })),
    );
    const held = await until(
      async () => ({ sent: (await posts("acct_velocity")).length, held: await heldJobs("vel") }),
      (s) => s.sent + s.held.length === 300,
      60_000,
    );
    expect(held.sent).toBe(100);
    expect(held.held).toHaveLength(200);
    // Nothing more leaves while they are held.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await posts("acct_velocity")).toHaveLength(100);
    expect(await events("vel", "account.velocity_hold")).toHaveLength(1);

    const own = await api(TOKENS.submitter, "POST", "/v1/accounts/vel/holds/NGN/release");
    expect(own.status, own.text).toBe(403);
    expect(own.json().error.code).toBe("own_work");
    expect(await heldJobs("vel")).toHaveLength(200);

    const released = await api(TOKENS.approver, "POST", "/v1/accounts/vel/holds/NGN/release");
    expect(released.status, released.text).toBe(200);
    expect(released.json().released).toBe(200);
    const again = await api(TOKENS.approver, "POST", "/v1/accounts/vel/holds/NGN/release");
    expect(again.json().released).toBe(0);
    const done = await until(
      () => results("vel"),
      (r) => r.length >= 300,
      60_000,
    );
    expect(done.filter((r) => r.result === "succeeded")).toHaveLength(300);
    // Held is not failed: no attempt was spent on a hold, nor on an error of the gate.
    expect(done.filter((r) => r.attempts !== 1)).toEqual([]);
    const sent = await posts("acct_velocity");
    expect(sent).toHaveLength(300);
    expect(new Set(sent.map((r) => r.idempotencyKey)).size).toBe(300);
    const audit = (await api(TOKENS.approver, "GET", "/v1/accounts/vel/holds")).json().audit;
    // Newest first: the release, then the repeat that found nothing.
    expect(audit.filter((a: { action: string }) => a.action === "release")).toEqual([
      expect.objectContaining({ by: "approver", currency: "NGN", jobs: 0 }),
      expect.objectContaining({ by: "approver", currency: "NGN", jobs: 200 }),
    ]);

    // A job after the release is held again: the window still holds 30,000 NGN.
    await submitBatch(
      "vel",
      bankCsv("vel-late", 1, (_n, c) => Object.assign(c, { amount: "100" })),
    );
    const late = await until(
      () => heldJobs("vel"),
      (h) => h.length === 1,
      30_000,
    );
    expect(late).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await posts("acct_velocity")).toHaveLength(300);
    // A batch's held row is cancelled with its batch, not by the hold's cancel: it stays held.
    const cancel = await api(
      TOKENS.approver,
      "POST",
      "/v1/accounts/vel/holds/NGN/cancel",
      JSON.stringify({ cause: "velocity" }),
      "application/json",
    );
    expect(cancel.status, cancel.text).toBe(200);
    expect(cancel.json()).toMatchObject({ cancelled: 0, batchRows: [{ jobId: late[0] }] });
    expect(await heldJobs("vel")).toEqual(late);
  }, 180_000);

  it("holds one beneficiary's payments across two batches past its daily amount, others go on", async () => {
    // Beneficiary 0123456789 is paid 100 NGN by rows 1 to 4 of each batch; the others are
    // each paid once.
    const csv = (tag: string) =>
      bankCsv(tag, 10, (n, c) =>
        Object.assign(c, {
          amount: "100",
          accountNumber:
            n <= 4 ? "0123456789" : `${tag === "a" ? "11" : "22"}${String(n).padStart(8, "0")}`,
        }),
      );
    await submitBatch("ben", csv("a"));
    await submitBatch("ben", csv("b"));
    const state = await until(
      async () => ({ sent: await posts("acct_beneficiary"), held: await heldJobs("ben") }),
      (s) => s.sent.length + s.held.length === 20,
      60_000,
    );
    // 300 NGN a day: three of the eight payments to the one beneficiary, all twelve others.
    expect(state.sent).toHaveLength(15);
    expect(state.held).toHaveLength(5);
    // Announced by the worker whose job began the hold, a little after the gate held it.
    const announced = await until(
      () => events("ben", "account.velocity_hold"),
      (e) => e.length > 0,
      10_000,
    );
    expect(announced).toEqual([
      expect.objectContaining({ data: expect.objectContaining({ limit: "beneficiary" }) }),
    ]);
    const released = await api(TOKENS.approver, "POST", "/v1/accounts/ben/holds/NGN/release");
    expect(released.json().released).toBe(5);
    const done = await until(
      () => results("ben"),
      (r) => r.length >= 20,
      60_000,
    );
    expect(done.filter((r) => r.result === "succeeded")).toHaveLength(20);
    expect(done.filter((r) => r.attempts !== 1)).toEqual([]);
    expect(await posts("acct_beneficiary")).toHaveLength(20);
    // Announced once, however many of its jobs the hold kept.
    expect(await events("ben", "account.velocity_hold")).toHaveLength(1);
  }, 120_000);
});
