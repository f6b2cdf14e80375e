import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { type Cluster, Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { csvRows } from "../../src/batches/batch-rows.js";
import { Batches } from "../../src/batches/batches.js";
import { migrateLegacyBatchKeys } from "../../src/batches/legacy-batch-keys.js";
import { accountQueueName } from "../../src/queues/queue-names.js";
import { RequestFingerprints } from "../../src/queues/request-fingerprint.js";
import { bullKeys } from "../../src/redis/bullmq-internals.js";
import { resultMarkerKey } from "../../src/redis/keys.js";
import * as catalogue from "../../src/redis/scripts/lua-scripts.js";
import type { Script } from "../../src/redis/scripts/script.js";
import { bankJob } from "../fixtures/batches.js";
import { hookedProducer } from "../helpers/hooks.js";
import {
  ALPHA_TOKEN,
  BETA_TOKEN,
  bankCsv,
  batchFinished,
  until,
  useService,
} from "../helpers/service.js";

// Run by `npm run test:cluster` only: it needs the local cluster of test/setup/cluster-setup.ts.
// Every Lua script of src/redis/scripts (its catalogue, checked against the folder by
// test/redis/lua-headers.test.ts), so a new one is covered.
const SCRIPTS: Script[] = Object.values(catalogue);
const SHA_OF_SHOWN = new Map(SCRIPTS.map((s) => [shownByMonitor(s.lua), sha1(s.lua)]));
// Batches written by a release before batches had accounts exist only on a single Redis.
const SINGLE_REDIS_ONLY = new Set(["moneyqMoveLegacyBatch"]);
// The accounts' turns are the service's, not an account's: their keys share the tag `turns`.
const SHARED_SLOT = new Set(["moneyqClaimTurns", "moneyqReleaseTurn"]);
const SCRIPT_OF_SHA = new Map(SCRIPTS.map((s) => [sha1(s.lua), s]));
const SHARED_SHAS = new Set(SCRIPTS.filter((s) => SHARED_SLOT.has(s.name)).map((s) => sha1(s.lua)));

const CHECKERS = { alpha: "tok_alpha_checker_0123456789", beta: "tok_beta_checker_01234567890" };
const TOKENS = { alpha: ALPHA_TOKEN, beta: BETA_TOKEN };
const SANDBOX_IDS = { alpha: "acct_alpha", beta: "acct_beta" };
type Account = keyof typeof TOKENS;
const ACCOUNTS: Account[] = ["alpha", "beta"];

// One attempt a job, so a provider error makes a dead letter at once; a job over 5,000 NGN
// waits for a second token's approval.
// Succeeded payouts are looked up again 1 s after their success; a payout still pending 1 s
// after its first PENDING ends needs_reconciliation.
const h = useService({
  MONEYQ_MAX_ATTEMPTS: "1",
  MONEYQ_RECHECK_AFTER: "1s",
  MONEYQ_CONFIRM_DEADLINE_MS: "1000",
  MONEYQ_API_TOKENS: JSON.stringify([
    { name: "alpha-ops", token: ALPHA_TOKEN, accounts: ["alpha"] },
    { name: "alpha-checker", token: CHECKERS.alpha, accounts: ["alpha"] },
    { name: "beta-ops", token: BETA_TOKEN, accounts: ["beta"] },
    { name: "beta-checker", token: CHECKERS.beta, accounts: ["beta"] },
  ]),
  MONEYQ_APPROVAL_POLICIES: JSON.stringify(
    ACCOUNTS.map((account) => ({ account, jobsOver: { NGN: "5000" } })),
  ),
  // One KES payout an hour: a second one is held by the velocity limit.
  MONEYQ_VELOCITY_LIMITS: JSON.stringify(
    ACCOUNTS.map((account) => ({ account, currency: "KES", perHour: { count: 1 } })),
  ),
});

function scriptNamed(name: string): Script {
  const script = SCRIPTS.find((s) => s.name === name);
  if (!script) throw new Error(`no script ${name}`);
  return script;
}

/** A script call one master saw: the script's SHA1 and the keys it was given. */
interface ScriptCall {
  readonly sha: string;
  readonly keys: readonly string[];
  /** How many arguments (ARGV) it was given. */
  readonly args: number;
}

/** Every script call each master runs from now on, by its address (MONITOR on each). */
const seen = new Map<string, ScriptCall[]>();
const monitors: Redis[] = [];
const masterOf = new Map<Account, string>();

beforeAll(async () => {
  const admin = h.redis() as Cluster;
  // Each range of slots with its master's address.
  const ranges = (await admin.cluster("SLOTS")).map(([from, to, master]) => ({
    from,
    to,
    address: `${master?.[0]}:${master?.[1]}`,
  }));
  for (const account of ACCOUNTS) {
    const slot = Number(await admin.cluster("KEYSLOT", `{${account}}`));
    const range = ranges.find(({ from, to }) => slot >= from && slot <= to);
    masterOf.set(account, range?.address ?? "none");
  }
  for (const address of new Set(ranges.map((r) => r.address))) {
    const [host, port] = address.split(":");
    const calls: ScriptCall[] = [];
    seen.set(address, calls);
    const monitor = await new Redis({ host, port: Number(port), lazyConnect: true }).monitor();
    monitors.push(monitor);
    monitor.on("monitor", (_time: string, args: string[]) => {
      const call = scriptCallOf(args);
      if (call) calls.push(call);
    });
  }
});

afterAll(async () => {
  await Promise.allSettled(monitors.map((m) => m.disconnect()));
});

/** An EVALSHA or EVAL as MONITOR shows it; undefined for any other command. */
function scriptCallOf(args: readonly string[]): ScriptCall | undefined {
  const [command, body, count] = args;
  const name = command?.toLowerCase();
  if ((name !== "evalsha" && name !== "eval") || body === undefined) return undefined;
  // ioredis sends a script's text (EVAL) the first time on each connection, then its SHA1.
  const sha = name === "evalsha" ? body : (SHA_OF_SHOWN.get(body) ?? "unknown script");
  return {
    sha,
    keys: args.slice(3, 3 + Number(count)),
    args: Math.max(0, args.length - 3 - Number(count)),
  };
}

/**
 * A script's text as ioredis's MONITOR parser hands it over: Redis quotes each byte as
 * sdscatrepr does (\\, \", \n, \r, \t, \a, \b, \xHH), and ioredis takes back only \".
 */
function shownByMonitor(text: string): string {
  const named: Record<number, string> = {
    92: "\\\\",
    34: '"',
    10: "\\n",
    13: "\\r",
    9: "\\t",
    7: "\\a",
    8: "\\b",
  };
  let shown = "";
  for (const byte of Buffer.from(text, "utf8"))
    shown +=
      named[byte] ??
      (byte >= 32 && byte < 127
        ? String.fromCharCode(byte)
        : `\\x${byte.toString(16).padStart(2, "0")}`);
  return shown;
}

function sha1(text: string): string {
  return createHash("sha1").update(text).digest("hex");
}

/** A key's hash tag, as Redis Cluster reads it: what lies between the first '{' and the next '}'. */
function hashTagOf(key: string): string | undefined {
  const open = key.indexOf("{");
  const close = key.indexOf("}", open + 1);
  return open >= 0 && close > open + 1 ? key.slice(open + 1, close) : undefined;
}

/** A call gives its script the keys and arguments its header names: as many, or more per item. */
function expectAsItsHeaderSays(call: ScriptCall): void {
  const script = SCRIPT_OF_SHA.get(call.sha);
  // BullMQ's own scripts run on the same keys.
  if (script === undefined) return;
  const { keys, args, keysPerItem, argsPerItem } = script.header;
  const fits = (given: number, named: number, perItem: boolean) =>
    perItem ? given >= named : given === named;
  expect(
    fits(call.keys.length, keys.length, keysPerItem) && fits(call.args, args.length, argsPerItem),
    `${script.name} given ${call.keys.length} keys and ${call.args} arguments`,
  ).toBe(true);
}

const finished = (token: string, jobId: string, timeoutMs?: number) =>
  until(
    () => h.api("GET", `/v1/jobs/${jobId}`, { token }),
    (r) => r.body?.result !== null && r.body?.result !== undefined,
    timeoutMs,
  );

/** Runs, for one account, the work that calls every script: jobs, a batch, holds, replays. */
async function exerciseEveryScript(account: Account): Promise<void> {
  const token = TOKENS[account];
  const enqueue = async (body: unknown) => {
    const answer = await h.api("POST", "/v1/jobs", { token, body });
    expect(answer.status).toBe(202);
    return answer.body.jobId as string;
  };
  // A payout, and a kind without an idempotency key (its "sent" record).
  for (const jobId of [
    await enqueue(bankJob({ idempotencyKey: `every-${account}-payout` })),
    await enqueue({
      kind: "collection.virtual-account",
      idempotencyKey: `every-${account}-va`,
      request: { body: { amount: 1000, validFor: 30 } },
    }),
  ])
    expect((await finished(token, jobId)).body.result.result).toBe("succeeded");

  // A job over the account's amount, approved by a second token.
  const held = await enqueue(
    bankJob({ idempotencyKey: `every-${account}-held` }, { amount: 6_000 }),
  );
  const approved = await h.api("POST", `/v1/jobs/${held}/approve`, { token: CHECKERS[account] });
  expect(approved.status).toBe(200);
  expect((await finished(token, held)).body.result.result).toBe("succeeded");

  await submitBatchRenewingItsLease(account);
  await abandonBatchSubmission(account);
  await cancelScheduledBatch(account);
  await replayDeadLetter(account);
  await pauseOn429(account);
  await reversedAfterSuccess(account);
  await resolvedByHand(account);
  await heldByOutflowSafety(account);
}

/**
 * A second KES payout over the hour's count is held, and released by a second token; a GHS
 * payout refused for want of funds holds its lane, which is resumed, and then its held job
 * (refused again) is cancelled.
 */
async function heldByOutflowSafety(account: Account): Promise<void> {
  const token = TOKENS[account];
  const enqueue = async (key: string, body: Record<string, unknown>) =>
    (await h.api("POST", "/v1/jobs", { token, body: bankJob({ idempotencyKey: key }, body) })).body
      .jobId as string;
  const holds = async (cause: string) =>
    (await h.api("GET", `/v1/accounts/${account}/holds`, { token })).body.holds.filter(
      (x: { cause: string }) => x.cause === cause,
    );
  const first = await enqueue(`every-${account}-kes-1`, { currency: "KES" });
  expect((await finished(token, first)).body.result.result).toBe("succeeded");
  const second = await enqueue(`every-${account}-kes-2`, { currency: "KES" });
  await until(
    () => holds("velocity"),
    (x) => x[0]?.jobIds.length === 1,
  );
  const released = await h.api("POST", `/v1/accounts/${account}/holds/KES/release`, {
    token: CHECKERS[account],
  });
  expect(released.body.released).toBe(1);
  expect((await finished(token, second)).body.result.result).toBe("succeeded");

  const poor = await enqueue(`every-${account}-poor`, {
    currency: "GHS",
    accountNumber: "0000000004",
  });
  await until(
    () => holds("insufficient_funds"),
    (x) => x[0]?.jobIds.length === 1,
  );
  await h.api("POST", `/v1/accounts/${account}/holds/GHS/resume`, { token });
  await until(
    () => holds("insufficient_funds"),
    (x) => x[0]?.jobIds.length === 1,
  );
  const cancelled = await h.api("POST", `/v1/accounts/${account}/holds/GHS/cancel`, {
    token,
    body: { cause: "insufficient_funds" },
  });
  expect(cancelled.body.cancelled).toBe(1);
  expect((await finished(token, poor)).body.result.result).toBe("cancelled");
}

/** A payout the provider reverses after its success: its re-check records the reversal. */
async function reversedAfterSuccess(account: Account): Promise<void> {
  const token = TOKENS[account];
  const body = bankJob(
    { idempotencyKey: `every-${account}-reversed` },
    { accountNumber: "0000000003" },
  );
  const jobId = (await h.api("POST", "/v1/jobs", { token, body })).body.jobId as string;
  await until(
    () => h.api("GET", `/v1/jobs/${jobId}`, { token }),
    (r) => r.body?.reversal?.foundBy === "recheck",
  );
}

/** A payout that stays pending ends needs_reconciliation, and is resolved by hand. */
async function resolvedByHand(account: Account): Promise<void> {
  const token = TOKENS[account];
  const body = bankJob(
    { idempotencyKey: `every-${account}-pending` },
    { accountNumber: "0000000002" },
  );
  const jobId = (await h.api("POST", "/v1/jobs", { token, body })).body.jobId as string;
  const done = await until(
    () => h.api("GET", `/v1/jobs/${jobId}`, { token }),
    (r) => r.body?.result?.result === "needs_reconciliation",
  );
  expect(done.body.result.code).toBe("confirm_deadline");
  const resolved = await h.api("POST", `/v1/jobs/${jobId}/resolve`, {
    token,
    body: { result: "failed", note: "never paid, per the provider's support" },
  });
  expect(resolved.status).toBe(200);
}

/** A batch whose submission stalls past a third of its lease, so the lease is renewed. */
async function submitBatchRenewingItsLease(account: Account): Promise<void> {
  const leaseMs = 300;
  const batches = new Batches({
    connection: h.redis(),
    prefix: h.config().redisPrefix,
    producer: hookedProducer(h.service().producer, async () => {
      await new Promise((r) => setTimeout(r, leaseMs));
    }),
    results: h.service().results,
    submitLeaseMs: leaseMs,
  });
  const batchId = `every-${account}`;
  const submitted = await batches.submit({
    account,
    kind: "payout.bank",
    batchId,
    source: csvRows(Readable.from([bankCsv(`every-${account}`, 3)]), "payout.bank"),
  });
  expect(submitted.created).toBe(true);
  const done = await batchFinished(h, TOKENS[account], batchId);
  expect(done.body).toMatchObject({ account, state: "completed", counts: { succeeded: 3 } });
}

/** A submission that fails after its first chunk, left alone: the sweep cancels the batch. */
async function abandonBatchSubmission(account: Account): Promise<void> {
  const leaseMs = 300;
  const batches = new Batches({
    connection: h.redis(),
    prefix: h.config().redisPrefix,
    producer: hookedProducer(h.service().producer, async (call) => {
      if (call > 1) throw new Error("the submission stops here");
    }),
    results: h.service().results,
    submitLeaseMs: leaseMs,
  });
  const batchId = `every-${account}-abandoned`;
  const submitting = batches.submit({
    account,
    kind: "payout.bank",
    batchId,
    source: csvRows(Readable.from([bankCsv(`every-${account}-abandoned`, 150)]), "payout.bank"),
  });
  await expect(submitting).rejects.toThrow("the submission stops here");
  await new Promise((r) => setTimeout(r, 2 * leaseMs));
  await until(
    async () => {
      await batches.sweepUnsealed([account]);
      return batches.status(account, batchId);
    },
    (s) => s.finishedAt !== undefined,
  );
  expect(await batches.status(account, batchId)).toMatchObject({
    state: "cancelled",
    cancelReason: "submission_abandoned",
    accepted: 100,
    counts: { cancelled: 100 },
  });
}

async function cancelScheduledBatch(account: Account): Promise<void> {
  const token = TOKENS[account];
  const batchId = `every-${account}-later`;
  const notBefore = new Date(Date.now() + 60_000).toISOString();
  const query = `kind=payout.bank&batchId=${batchId}&notBefore=${encodeURIComponent(notBefore)}`;
  const csv = bankCsv(`every-${account}-later`, 2);
  expect((await h.api("POST", `/v1/batches?${query}`, { token, csv })).status).toBe(202);
  const cancelled = await h.api("POST", `/v1/batches/${batchId}/cancel`, { token });
  expect(cancelled.status).toBe(200);
  expect(cancelled.body).toMatchObject({ cancelled: 2, status: { state: "cancelled" } });
}

/** A payout refused by the provider is a dead letter (one attempt); replayed, it succeeds. */
async function replayDeadLetter(account: Account): Promise<void> {
  const token = TOKENS[account];
  const faults = `/accounts/${SANDBOX_IDS[account]}/faults`;
  await h.sb.control("PUT", faults, { body: { errorRate: 1 } });
  let jobId: string;
  try {
    const answer = await h.api("POST", "/v1/jobs", {
      token,
      body: bankJob({ idempotencyKey: `every-${account}-dead` }),
    });
    jobId = answer.body.jobId;
    await until(
      () => h.api("GET", `/v1/jobs/${jobId}`, { token }),
      (r) => r.body?.state === "failed" && r.body?.result !== null,
    );
  } finally {
    await h.sb.control("DELETE", faults);
  }
  const replay = await h.api("POST", `/v1/dead-letters/${jobId}/replay`, { token });
  expect(replay.status).toBe(202);
  await until(
    () => h.api("GET", `/v1/jobs/${jobId}`, { token }),
    (r) => r.body?.result?.result === "succeeded",
  );
}

/** The provider allows one request a second and answers the next 429 with Retry-After: 1. */
async function pauseOn429(account: Account): Promise<void> {
  const token = TOKENS[account];
  const faults = `/accounts/${SANDBOX_IDS[account]}/faults`;
  await h.sb.control("PUT", faults, {
    body: { rateLimitPerSecond: 1, rateLimitRetryAfterSeconds: 1 },
  });
  try {
    const jobs = await Promise.all(
      [1, 2, 3].map(async (n) => {
        const body = bankJob({ idempotencyKey: `every-${account}-429-${n}` });
        return (await h.api("POST", "/v1/jobs", { token, body })).body.jobId as string;
      }),
    );
    // At 1 request a second, shared with the re-checks (1 s after each success) of every payout
    // before them, three payouts and their lookups take longer than the usual 20 s.
    for (const jobId of jobs) await finished(token, jobId, 90_000);
    const limited = (await h.sb.control("GET", "/requests")).body.data.requests.filter(
      (r: { rateLimited?: boolean; accountId: string }) =>
        r.rateLimited && r.accountId === SANDBOX_IDS[account],
    );
    expect(limited.length).toBeGreaterThan(0);
  } finally {
    await h.sb.control("DELETE", faults);
  }
}

/** Gives back, for both accounts in one call, fingerprint claims whose jobs were never added. */
async function releaseUnusedClaims(): Promise<void> {
  const prefix = h.config().redisPrefix;
  const fingerprints = new RequestFingerprints(h.redis(), prefix, 60_000);
  const entries = ACCOUNTS.map((account) => ({
    account,
    jobId: `every-${account}-unused`,
    jobKey: bullKeys.job(
      bullKeys.queue(prefix, accountQueueName(h.space(), account)),
      `every-${account}-unused`,
    ),
    markerKey: resultMarkerKey(h.space(), account, `every-${account}-unused`),
    fingerprint: `fingerprint-of-${account}`,
  }));
  for (const e of entries) await h.redis().set(fingerprints.key(e.account, e.jobId), e.fingerprint);
  await fingerprints.release(entries);
  for (const e of entries)
    expect(await h.redis().exists(fingerprints.key(e.account, e.jobId))).toBe(0);
}

describe("every Lua script on a Redis Cluster, with two accounts on two shards", () => {
  it("the two accounts live on different masters", () => {
    expect(new Set(masterOf.values()).size).toBe(2);
    expect(SCRIPTS.length).toBeGreaterThan(10);
  });

  it("each script runs on each account's own master, given only that account's keys", async () => {
    await Promise.all(ACCOUNTS.map(exerciseEveryScript));
    await releaseUnusedClaims();

    const prefix = h.config().redisPrefix;
    const ours = (call: ScriptCall) => call.keys.some((k) => k.includes(prefix));
    // A turn is given up once its account has been idle a few seconds.
    const ranShared = (name: string) =>
      [...seen.values()].some((calls) =>
        calls.some((c) => ours(c) && c.sha === sha1(scriptNamed(name).lua)),
      );
    await until(async () => [...SHARED_SLOT].every(ranShared), Boolean, 30_000);
    for (const [address, calls] of seen)
      for (const call of calls.filter(ours)) {
        // One hash tag for every key of a call: one account (or the turns), one slot.
        const tags = new Set(call.keys.map(hashTagOf));
        expect(tags.size, `${address} ${call.keys.join(" ")}`).toBe(1);
        const [tag] = tags;
        if (SHARED_SHAS.has(call.sha)) expect(tag).toBe("turns");
        else expect(masterOf.get(tag as Account), `${tag} ran on ${address}`).toBe(address);
        expectAsItsHeaderSays(call);
      }
    const missing: string[] = [];
    const perAccount = (s: Script) => !SINGLE_REDIS_ONLY.has(s.name) && !SHARED_SLOT.has(s.name);
    for (const script of SCRIPTS.filter(perAccount))
      for (const account of ACCOUNTS) {
        const calls = seen.get(masterOf.get(account) as string) ?? [];
        const ran = calls.some(
          (c) => ours(c) && c.sha === sha1(script.lua) && hashTagOf(c.keys[0] ?? "") === account,
        );
        if (!ran) missing.push(`${script.name} (${account})`);
      }
    expect(missing).toEqual([]);
  }, 240_000);

  it("the move of batches written before accounts is a single Redis's only, and does nothing here", async () => {
    expect(await migrateLegacyBatchKeys(h.redis(), h.config().redisPrefix)).toEqual({
      moved: 0,
      conflicts: [],
    });
  });
});
