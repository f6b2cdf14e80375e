import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor, waitUntil } from "../helpers/wait-until.js";
import { BASE_IMAGES } from "./base-images.js";
import { COMPOSE_PROJECT, removeLeftovers } from "./leftovers.js";
import { BATCH_ROWS, call, payBatch, waitReady } from "./moneyq-api.js";
import { logsOf, must, ROOT, run } from "./podman.js";

/** Every service of deploy/docker-compose.yml but Grafana, which has no Debian package. */
const SERVICES = ["redis", "sandbox", "api", "worker", "prometheus"];
const API = "http://127.0.0.1:8080";
const PROMETHEUS = "http://127.0.0.1:9090";
const TOKEN = "mq_dev_compose_token_change_me";

const dir = mkdtempSync(join(tmpdir(), "moneyq-image-compose-"));
/**
 * The compose file as it is, with the stand-ins for the two images no registry here serves
 * (test/image/images/). podman-compose merges this over it; everything else is the file's.
 */
const override = join(dir, "compose.override.yml");
writeFileSync(
  override,
  [
    "services:",
    "  redis:",
    `    image: ${BASE_IMAGES.redis}`,
    "  prometheus:",
    `    image: ${BASE_IMAGES.prometheus}`,
    "",
  ].join("\n"),
);

function compose(...args: string[]) {
  const file = join(ROOT, "deploy/docker-compose.yml");
  return run(
    "podman-compose",
    ["-p", COMPOSE_PROJECT, "-f", file, "-f", override, ...args],
    300_000,
  );
}

/** The stack's containers: name, compose service and state. */
function containers(): { name: string; service: string; state: string }[] {
  const listed = must("podman", [
    ...["ps", "--all", "--format", "json"],
    ...["--filter", `label=io.podman.compose.project=${COMPOSE_PROJECT}`],
  ]);
  return (
    JSON.parse(listed) as { Names: string[]; Labels: Record<string, string>; State: string }[]
  )
    .map((c) => ({
      name: c.Names[0] ?? "",
      service: c.Labels["com.docker.compose.service"] ?? "",
      state: c.State,
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

function stackLogs(): string {
  return containers()
    .map((c) => `--- ${c.name} (${c.state})\n${logsOf(c.name).split("\n").slice(-15).join("\n")}`)
    .join("\n");
}

/** Whether something on this host already answers on `port` (the compose file publishes it). */
function taken(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });
}

/** One of Prometheus's active targets, as /api/v1/targets lists it. */
interface Target {
  readonly labels: { job: string; instance: string };
  readonly health: string;
}

// biome-ignore lint/suspicious/noExplicitAny: Prometheus's JSON answers
async function prometheus(path: string): Promise<any> {
  return (await call(`${PROMETHEUS}${path}`)).body;
}

describe("deploy/docker-compose.yml under podman-compose", () => {
  beforeAll(async () => {
    // podman-compose reads deploy/.env, where real PAYMENTS_API_URL and keys may be kept.
    if (existsSync(join(ROOT, "deploy/.env")))
      throw new Error(
        "deploy/.env exists: move it away, the stack under test pays through its sandbox",
      );
    for (const port of [8080, 9090])
      if (await taken(port))
        throw new Error(`port ${port} is in use on this host; the compose file publishes it`);
    const up = compose("up", "--detach", "--no-build", ...SERVICES);
    if (up.code !== 0) throw new Error(`podman-compose up failed:\n${up.stderr}`);
    await waitReady(API, stackLogs);
  });

  afterAll(() => {
    compose("down", "--volumes");
    removeLeftovers();
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs Redis, the sandbox, the API, two workers and Prometheus", () => {
    const running = containers();
    expect(running.map((c) => c.service).sort()).toEqual([
      "api",
      "prometheus",
      "redis",
      "sandbox",
      "worker",
      "worker",
    ]);
    for (const c of running) expect(c.state, c.name).toBe("running");
  });

  it("passes every health check: Redis's and the sandbox's from the file, the image's on the API and workers", async () => {
    for (const { name, service } of containers().filter((c) => c.service !== "prometheus"))
      await waitUntil(
        () => run("podman", ["healthcheck", "run", name]).code === 0,
        60_000,
        `${service} (${name}) to pass its health check`,
        1_000,
      );
  });

  it("pays a batch: API, Redis, the workers and the sandbox service, with the file's token", async () => {
    const paid = await payBatch(API, TOKEN);
    expect(paid.status).toMatchObject({ state: "completed", counts: { succeeded: BATCH_ROWS } });
    expect(paid.rows.map((row) => row.result)).toEqual(Array(BATCH_ROWS).fill("succeeded"));
  });

  it("has Prometheus scrape the API and both workers, found by name, every target up", async () => {
    const targets = await waitFor(
      async (): Promise<Target[]> =>
        ((await prometheus("/api/v1/targets"))?.data?.activeTargets ?? []).filter(
          (t: Target) => t.labels.job === "moneyq",
        ),
      (found) => found.length === 3 && found.every((t) => t.health === "up"),
      120_000,
      (last) => `three moneyq targets up (last: ${JSON.stringify(last)})`,
      1_000,
    );
    const ports = targets.map((t) => t.labels.instance.split(":").pop());
    expect(ports.sort()).toEqual(["8080", "9464", "9464"]);
  });

  it("has the workers' results in Prometheus, and the alert rules loaded", async () => {
    const query = encodeURIComponent(
      'sum(moneyq_jobs_finished_total{kind="payout.bank",result="succeeded"})',
    );
    await waitUntil(
      async () =>
        (await prometheus(`/api/v1/query?query=${query}`))?.data?.result?.[0]?.value?.[1] ===
        String(BATCH_ROWS),
      60_000,
      `Prometheus to count the batch's ${BATCH_ROWS} succeeded payouts`,
      1_000,
    );
    const groups = (await prometheus("/api/v1/rules")).data.groups;
    expect(groups.map((g: { name: string }) => g.name)).toContain("moneyq");
  });
});
