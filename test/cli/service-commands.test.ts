import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, inject, it, onTestFinished } from "vitest";
import { serviceRedis } from "../../src/redis/service-redis.js";
import { RedisUnavailableError } from "../../src/redis/unavailable-error.js";
import { EMBEDDED_DEV_TOKEN } from "../../src/service/start-service.js";
import { spawnCli } from "../helpers/cli.js";
import { useTestRedis } from "../helpers/redis.js";
import { until } from "../helpers/service.js";

const root = join(import.meta.dirname, "..", "..");

describe("npm run demo", () => {
  it("pays the example batches through the embedded sandbox and prints the summary", async () => {
    const child = spawn("npm", ["run", "--silent", "demo"], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? root,
        REDIS_URL: inject("redisUrl"),
      },
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group, so that a test ending early stops npm and the demo under it.
      detached: true,
    });
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined)
        process.kill(-child.pid, "SIGKILL");
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code, stderr).toBe(0);
    const firstLine = stderr.split("\n").find((l) => l.startsWith("moneyq starting"));
    expect(firstLine).toContain("no PAYMENTS_API_URL: the embedded sandbox at http://127.0.0.1:");
    expect(stderr).toMatch(/metrics while it runs: http:\/\/127\.0\.0\.1:\d+\/metrics/);
    expect(stderr).toMatch(/100% \| 360\/360 rows/);
    // 240 bank and 120 mobile money rows; the magic values fail 6 and 3 of them.
    expect(stdout).toMatch(/payout\.bank\s+240\s+234\s+6\s+0\s+0\s+0\s+completed_with_failures/);
    expect(stdout).toMatch(/payout\.momo\s+120\s+117\s+3\s+0\s+0\s+0\s+completed_with_failures/);
    expect(stdout).toMatch(/total\s+360\s+351\s+9\s+0\s+0\s+0/);
    const reports = [...stdout.matchAll(/^report: (.+)$/gm)].map((m) => m[1] as string);
    expect(reports).toHaveLength(2);
    const bank = (await readFile(reports[0] as string, "utf8")).trim().split("\n");
    expect(bank).toHaveLength(241);
    expect(bank.filter((l) => l.includes(",failed,"))).toHaveLength(6);
  }, 300_000);
});

describe("moneyq start on embedded defaults", () => {
  const startRedis = useTestRedis("start");
  // A private redis-server stands in only when REDIS_URL is not set (test/service/redis-at-start.test.ts).
  it("runs the sandbox in-process, says so first, serves jobs, and stops on SIGTERM", async () => {
    const child = spawnCli(["start"], {
      REDIS_URL: startRedis.url,
      MONEYQ_REDIS_PREFIX: startRedis.prefix,
      MONEYQ_API_PORT: "0",
    });
    let stdout = "";
    child.stdout?.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    const lines = await until(
      async () => stdout.split("\n").filter(Boolean),
      (l) => l.some((line) => line.includes("API listening")),
    );
    const first = JSON.parse(lines[0] as string);
    expect(first.msg).toContain("moneyq starting (all)");
    expect(first.msg).toContain("no PAYMENTS_API_URL: the embedded sandbox at http://127.0.0.1:");
    expect(first.msg).not.toContain("private redis-server");
    const apiUrl = JSON.parse(lines.find((l) => l.includes("API listening")) as string).api;
    expect((await fetch(`${apiUrl}/readyz`)).status).toBe(200);
    const auth = {
      authorization: `Bearer ${EMBEDDED_DEV_TOKEN}`,
      "content-type": "application/json",
    };
    const job = (await (
      await fetch(`${apiUrl}/v1/jobs`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({
          kind: "payout.momo",
          idempotencyKey: "start-test-1",
          request: {
            body: {
              amount: 200,
              currency: "KES",
              phoneNumber: "254712345678",
              network: "MPESA",
              iso2: "KE",
            },
          },
        }),
      })
    ).json()) as { jobId: string };
    const done = await until(
      async () =>
        (await (await fetch(`${apiUrl}/v1/jobs/${job.jobId}`, { headers: auth })).json()) as {
          result?: { result: string; upstreamStatus: string };
        },
      (body) => body.result?.result === "succeeded",
    );
    expect(done.result?.upstreamStatus).toBe("SUCCESSFUL");
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  }, 60_000);

  it("without a Redis and without redis-server, stops with how to get one", async () => {
    const error = await serviceRedis("redis://127.0.0.1:1", "/nonexistent/redis-server").catch(
      (e) => e,
    );
    expect(error).toBeInstanceOf(RedisUnavailableError);
    expect(error.code).toBe("redis_unavailable");
    expect(error.message).toContain("Redis does not answer at redis://127.0.0.1:1");
    expect(error.message).toContain("apt-get install redis-server");
    expect(error.message).toContain("set REDIS_URL");
  });
});
