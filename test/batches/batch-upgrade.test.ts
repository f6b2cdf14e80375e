import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { migrateLegacyBatchKeys } from "../../src/batches/legacy-batch-keys.js";
import { loadConfig } from "../../src/config/load-config.js";
import { createLogger } from "../../src/logger.js";
import type { RedisConnection } from "../../src/redis/connection.js";
import { batchKeys, keyspace, legacyBatchKeys } from "../../src/redis/keys.js";
import { startService } from "../../src/service/start-service.js";
import { runCli } from "../helpers/cli.js";
import { ALPHA_TOKEN, BETA_TOKEN, bankCsv, until, useService } from "../helpers/service.js";

// Batches written before batches belonged to their account (meta at `<prefix>:batch:<id>`,
// rows at `<prefix>:batch:<id>:rows`, no digest) are found after an upgrade.
const h = useService();

const submit = (token: string, csv: string, batchId?: string) =>
  h.api("POST", `/v1/batches?kind=payout.bank${batchId ? `&batchId=${batchId}` : ""}`, {
    token,
    csv,
  });
const status = (token: string, batchId: string) =>
  h.api("GET", `/v1/batches/${batchId}`, { token });
const references = async (token: string, batchId: string) =>
  (await h.api("GET", `/v1/batches/${batchId}/results?format=jsonl`, { token })).text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line).reference as string);

/** Idempotency keys with a ledger effect at the sandbox for one account. */
async function effectKeys(accountId: string): Promise<string[]> {
  const entries = (await h.sb.control("GET", "/ledger", { query: { accountId } })).body.data
    .entries as { idempotencyKey: string | null }[];
  return [...new Set(entries.flatMap((e) => (e.idempotencyKey ? [e.idempotencyKey] : [])))];
}

/** Stores an account's batch where and as the version before accounts owned batches did. */
async function asLegacy(redis: RedisConnection, account: string, batchId: string): Promise<void> {
  const prefix = h.config().redisPrefix;
  const keys = batchKeys(keyspace(prefix), account, batchId);
  await redis.hdel(keys.meta, "digest");
  await redis.rename(keys.meta, legacyBatchKeys.meta(prefix, batchId));
  await redis.rename(keys.rows, legacyBatchKeys.rows(prefix, batchId));
}

describe("upgrading from batches keyed by id alone", () => {
  it("an earlier batch keeps its status and report, and its file is not paid again", {
    timeout: 120_000,
  }, async () => {
    const csv = bankCsv("legacy", 3);
    // Its jobs wait (the account is paused): they are in flight across the upgrade.
    await h.api("POST", "/v1/accounts/alpha/pause", { token: ALPHA_TOKEN });
    const first = await submit(ALPHA_TOKEN, csv);
    expect(first.body).toMatchObject({ created: true, accepted: 3 });
    const batchId = first.body.batchId as string;
    await asLegacy(h.redis(), "alpha", batchId);
    // What the upgrade found before keys were moved: the batch gone.
    expect((await status(ALPHA_TOKEN, batchId)).status).toBe(404);

    // The CLI's operator moves it when it opens the Redis.
    const cli = await runCli(["batch", "status", batchId, "--json"], h.env());
    expect(cli.stderr).toBe("");
    expect(JSON.parse(cli.stdout)).toMatchObject({ account: "alpha", state: "queued", rows: 3 });

    expect((await status(ALPHA_TOKEN, batchId)).body).toMatchObject({
      batchId,
      account: "alpha",
      state: "queued",
      rows: 3,
      accepted: 3,
    });
    expect(await references(ALPHA_TOKEN, batchId)).toEqual(["legacy-1", "legacy-2", "legacy-3"]);
    const before = await effectKeys("acct_alpha");
    const again = await submit(ALPHA_TOKEN, csv);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ batchId, created: false });

    await h.api("POST", "/v1/accounts/alpha/resume", { token: ALPHA_TOKEN });
    const done = await until(
      () => status(ALPHA_TOKEN, batchId),
      (r) => r.body?.finishedAt !== undefined,
    );
    // The jobs enqueued before the upgrade finished their batch.
    expect(done.body).toMatchObject({
      state: "completed",
      finished: 3,
      counts: { succeeded: 3 },
    });
    expect((await effectKeys("acct_alpha")).length).toBe(before.length + 3);
  });

  it("an earlier batch named like an account moves whole, and starting the service moves it", {
    timeout: 120_000,
  }, async () => {
    // alpha's batch "beta": its old rows key `batch:beta:rows` reads as beta's batch "rows".
    await h.api("POST", "/v1/accounts/alpha/pause", { token: ALPHA_TOKEN });
    try {
      expect((await submit(ALPHA_TOKEN, bankCsv("named", 2), "beta")).status).toBe(202);
      await asLegacy(h.redis(), "alpha", "beta");

      const second = await startService({
        config: loadConfig({ ...h.env(), MONEYQ_API_PORT: "0" }),
        logger: createLogger("silent"),
        role: "api",
      });
      await second.close();

      expect((await status(ALPHA_TOKEN, "beta")).body).toMatchObject({
        account: "alpha",
        rows: 2,
      });
      expect(await references(ALPHA_TOKEN, "beta")).toEqual(["named-1", "named-2"]);
      const rows = await status(BETA_TOKEN, "rows");
      expect(rows.status).toBe(404);
      expect(rows.body.error.code).toBe("not_found");
      const prefix = h.config().redisPrefix;
      expect(
        await h
          .redis()
          .exists(legacyBatchKeys.meta(prefix, "beta"), legacyBatchKeys.rows(prefix, "beta")),
      ).toBe(0);
    } finally {
      await h.api("POST", "/v1/batches/beta/cancel", { token: ALPHA_TOKEN });
      await h.api("POST", "/v1/accounts/alpha/resume", { token: ALPHA_TOKEN });
    }
  });

  it("processes starting at once move each batch exactly once", async () => {
    const ids = ["race-1", "race-2", "race-3", "race-4"];
    await h.api("POST", "/v1/accounts/beta/pause", { token: BETA_TOKEN });
    try {
      for (const id of ids) {
        expect((await submit(BETA_TOKEN, bankCsv(id, 1), id)).status).toBe(202);
        await asLegacy(h.redis(), "beta", id);
      }
      const prefix = h.config().redisPrefix;
      // Five processes: five connections.
      const connections = Array.from({ length: 5 }, () => new Redis(h.config().redisUrl));
      const runs = await Promise.all(
        connections.map((connection) => migrateLegacyBatchKeys(connection, prefix)),
      ).finally(() => Promise.all(connections.map((c) => c.quit())));
      expect(runs.reduce((n, r) => n + r.moved, 0)).toBe(ids.length);
      expect(runs.flatMap((r) => r.conflicts)).toEqual([]);
      for (const id of ids)
        expect((await status(BETA_TOKEN, id)).body).toMatchObject({ account: "beta", rows: 1 });
      expect((await migrateLegacyBatchKeys(h.redis(), prefix)).moved).toBe(0);
    } finally {
      for (const id of ids) await h.api("POST", `/v1/batches/${id}/cancel`, { token: BETA_TOKEN });
      await h.api("POST", "/v1/accounts/beta/resume", { token: BETA_TOKEN });
    }
  });
});
