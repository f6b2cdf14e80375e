import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PrivateRedis, startPrivateRedis } from "../../src/redis/private-redis.js";
import { runCli } from "../helpers/cli.js";
import { installed } from "../helpers/installed.js";
import { bankCsv } from "../helpers/service.js";

// A private redis-server, whose maxmemory this test lowers.
let redis: PrivateRedis;
let admin: Redis;
let dir = "";

beforeAll(async () => {
  redis = await startPrivateRedis(installed("redis-server", "redis-server"));
  admin = new Redis(redis.url);
  dir = await mkdtemp(join(tmpdir(), "moneyq-cli-trouble-"));
});

afterAll(async () => {
  admin?.disconnect();
  await redis?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("a CLI command while Redis refuses writes", () => {
  it("says so in one line, without a stack, exit 1; the same command after it succeeds", async () => {
    const path = join(dir, "payroll.csv");
    await writeFile(path, bankCsv("cli-oom", 3));
    const args = ["batch", "submit", path, "--kind", "payout.bank", "--json"];
    const env = { REDIS_URL: redis.url, MONEYQ_REDIS_PREFIX: "clioom" };
    await admin.config("SET", "maxmemory", "1");
    const refused = await runCli(args, env).finally(() => admin.config("SET", "maxmemory", "0"));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^moneyq: Redis is out of memory and refuses writes \(redis_out_of_memory\); nothing was done that running the same command again would repeat/,
    );
    expect(refused.stderr).not.toMatch(/\n\s+at /);
    const again = await runCli(args, env);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ created: true, accepted: 3 });
  }, 60_000);
});
