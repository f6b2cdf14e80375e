import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { batchKeys } from "../../src/redis/keys.js";
import { freePort } from "../../src/redis/private-redis.js";
import { EMBEDDED_DEV_TOKEN } from "../../src/service/start-service.js";
import { useTestRedis } from "../helpers/redis.js";
import { waitUntil } from "../helpers/wait-until.js";
import { BASE_IMAGES } from "./base-images.js";
import { TEST_LABEL } from "./leftovers.js";
import { BATCH_ROWS, call, type PaidBatch, payBatch, waitReady } from "./moneyq-api.js";
import { healthOf, logsOf, MONEYQ_IMAGE, podman, run } from "./podman.js";

/** The first line moneyq logs: which upstream and which Redis it uses. */
function startLine(container: string): { upstream: string; redis: string; msg: string } {
  return JSON.parse(logsOf(container).split("\n")[0] ?? "null");
}

/** Runs the image's HEALTHCHECK now (podman schedules it through systemd, absent here). */
function healthCheck(container: string) {
  return run("podman", ["healthcheck", "run", container]);
}

function expectAllPaid(paid: PaidBatch) {
  expect(paid.status).toMatchObject({
    state: "completed",
    finished: BATCH_ROWS,
    counts: { succeeded: BATCH_ROWS, failed: 0, needs_reconciliation: 0 },
  });
  expect(paid.rows).toHaveLength(BATCH_ROWS);
  for (const row of paid.rows) {
    expect(row.result).toBe("succeeded");
    expect(row.upstream_id).toMatch(/^txn_/);
  }
}

describe("the image alone: its embedded sandbox, a Redis container beside it", () => {
  const id = randomUUID().slice(0, 8);
  const network = `moneyq-image-${id}`;
  const redis = `moneyq-image-redis-${id}`;
  const app = `moneyq-image-app-${id}`;
  let api = "";

  beforeAll(async () => {
    podman("network", "create", "--label", TEST_LABEL, network);
    // The Redis container owns the network namespace and publishes the API's port; moneyq
    // joins it, so Redis answers at moneyq's default address, 127.0.0.1:6379.
    podman(
      ...["run", "--detach", "--name", redis, "--label", TEST_LABEL, "--network", network],
      ...["--publish", "127.0.0.1::8080", BASE_IMAGES.redis],
    );
    await waitUntil(
      () => run("podman", ["exec", redis, "redis-cli", "ping"]).stdout.trim() === "PONG",
      30_000,
      "the Redis container to answer",
      250,
    );
    // Nothing configured: no PAYMENTS_API_URL, no REDIS_URL, no token.
    podman(
      ...["run", "--detach", "--name", app, "--label", TEST_LABEL],
      ...["--network", `container:${redis}`, MONEYQ_IMAGE],
    );
    api = `http://${podman("port", redis, "8080/tcp").trim()}`;
    await waitReady(api, () => logsOf(app));
  });

  afterAll(() => {
    run("podman", ["rm", "--force", app, redis]);
    run("podman", ["network", "rm", "--force", network]);
  });

  it("runs Node 24 as the user node, with tini as PID 1 and moneyq's start as its command", () => {
    expect(podman("exec", app, "node", "--version")).toMatch(/^v24\./);
    expect(podman("exec", app, "id", "-un").trim()).toBe("node");
    const pid1 = podman("exec", app, "cat", "/proc/1/cmdline").split("\0").filter(Boolean);
    expect(pid1).toEqual(["/usr/bin/tini", "--", "node", "bin/moneyq.js", "start"]);
  });

  it("reaches healthy through the Dockerfile's HEALTHCHECK", () => {
    const check = healthCheck(app);
    expect(check.code, check.stderr).toBe(0);
    expect(healthOf(app)).toBe("healthy");
  });

  it("answers /readyz ready: Redis takes writes and the workers run", async () => {
    const ready = await call(`${api}/readyz`);
    expect(ready).toEqual({
      status: 200,
      body: { status: "ready", redis: true, workers: true, shuttingDown: false },
    });
  });

  it("says it runs on the embedded sandbox, with the Redis at the default address", () => {
    expect(startLine(app)).toMatchObject({
      upstream: "embedded sandbox",
      redis: "redis://127.0.0.1:6379",
    });
  });

  it("pays a batch through the embedded sandbox, over the HTTP API", async () => {
    expectAllPaid(await payBatch(api, EMBEDDED_DEV_TOKEN));
  });

  it("stops on SIGTERM: tini hands it to node, which shuts down and exits 0", () => {
    podman("stop", "--time", "30", app);
    expect(podman("inspect", "--format", "{{.State.ExitCode}}", app).trim()).toBe("0");
    const shutdown = logsOf(app)
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line))
      .find((entry) => entry.msg === "shutting down");
    expect(shutdown?.signal).toBe("SIGTERM");
  });
});

describe("the image pointed at an external Redis: this host's, through host networking", () => {
  const redis = useTestRedis("image");
  const app = `moneyq-image-external-${randomUUID().slice(0, 8)}`;
  let api = "";

  beforeAll(async () => {
    const port = await freePort();
    podman(
      ...["run", "--detach", "--name", app, "--label", TEST_LABEL, "--network", "host"],
      ...["--env", `REDIS_URL=${redis.url}`, "--env", `MONEYQ_REDIS_PREFIX=${redis.prefix}`],
      // On the host's network: the API on a free loopback port, not on every interface.
      ...["--env", "MONEYQ_API_HOST=127.0.0.1", "--env", `MONEYQ_API_PORT=${port}`],
      MONEYQ_IMAGE,
    );
    api = `http://127.0.0.1:${port}`;
    await waitReady(api, () => logsOf(app));
  });

  afterAll(() => {
    run("podman", ["rm", "--force", app]);
  });

  it("reaches healthy and ready on the configured Redis", async () => {
    const check = healthCheck(app);
    expect(check.code, check.stderr).toBe(0);
    expect(healthOf(app)).toBe("healthy");
    expect(startLine(app)).toMatchObject({ upstream: "embedded sandbox", redis: redis.url });
    expect((await call(`${api}/readyz`)).body).toMatchObject({ status: "ready", redis: true });
  });

  it("pays a batch, and keeps it in that Redis under its own prefix", async () => {
    const paid = await payBatch(api, EMBEDDED_DEV_TOKEN);
    expectAllPaid(paid);
    const meta = batchKeys(redis.space(), "default", paid.batchId).meta;
    expect(meta.startsWith(`${redis.prefix}:`)).toBe(true);
    expect(await redis.connect().hget(meta, "state")).toBe("completed");
  });
});
