import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { loadConfig } from "../../src/config/load-config.js";
import { createLogger } from "../../src/logger.js";
import { startPrivateRedis } from "../../src/redis/private-redis.js";
import { checkRedisSafety } from "../../src/redis/safety.js";
import { type Service, startService } from "../../src/service/start-service.js";
import { runCli } from "../helpers/cli.js";
import { installed } from "../helpers/installed.js";
import { useTestRedis } from "../helpers/redis.js";

const ROOT = join(import.meta.dirname, "../..");
const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");

/** Dockerfile instructions, continuation lines joined, comments dropped. */
const instructions = dockerfile
  .replace(/\\\n/g, " ")
  .split("\n")
  .map((line) => line.trim())
  .filter((line) => line !== "" && !line.startsWith("#"))
  .map((line) => {
    const [keyword = "", ...rest] = line.split(/\s+/);
    return { keyword: keyword.toUpperCase(), args: rest.join(" ") };
  });
const finalStage = instructions.slice(instructions.findLastIndex((i) => i.keyword === "FROM"));
const last = (keyword: string) => finalStage.findLast((i) => i.keyword === keyword)?.args;

function composeConfig(env: Record<string, string> = {}) {
  const binary = installed("docker-compose", "docker-compose");
  // `config` validates against the Compose schema and resolves variables; no engine needed.
  const out = execFileSync(binary, ["-f", join(ROOT, "deploy/docker-compose.yml"), "config"], {
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", ...env },
  });
  return parse(out);
}

describe("Dockerfile", () => {
  it("builds in stages and keeps only production dependencies", () => {
    expect(instructions.filter((i) => i.keyword === "FROM")).toHaveLength(2);
    expect(dockerfile).toContain("npm prune --omit=dev");
    expect(finalStage.some((i) => i.keyword === "COPY" && i.args.startsWith("--from=build"))).toBe(
      true,
    );
    for (const copy of instructions.filter(
      (i) => i.keyword === "COPY" && !i.args.includes("--from"),
    ))
      for (const source of copy.args.split(/\s+/).slice(0, -1))
        expect(existsSync(join(ROOT, source)), source).toBe(true);
  });

  it("runs on the Node major the tests run on", () => {
    const image = /^NODE_IMAGE=node:(\d+)-/.exec(
      instructions.find((i) => i.keyword === "ARG")?.args ?? "",
    );
    expect(image?.[1]).toBe(process.versions.node.split(".")[0]);
  });

  it("runs as a non-root user, under tini, with node as the command and the health check", () => {
    expect(last("USER")).toBe("node");
    expect(JSON.parse(last("ENTRYPOINT") ?? "null")).toEqual(["/usr/bin/tini", "--"]);
    expect(dockerfile).toMatch(/apt-get install -y --no-install-recommends tini/);
    expect(JSON.parse(last("CMD") ?? "null")).toEqual(["node", "bin/moneyq.js", "start"]);
    const health = /CMD (\[.*\])$/.exec(last("HEALTHCHECK") ?? "");
    expect(JSON.parse(health?.[1] ?? "null")).toEqual(["node", "bin/moneyq.js", "healthcheck"]);
    expect(last("ENV")).toContain("MONEYQ_API_HOST=0.0.0.0");
    expect(dockerfile).not.toMatch(/PAYMENTS_API_KEY|MONEYQ_API_TOKENS|_SECRET/);
  });
});

describe("moneyq healthcheck (the image's HEALTHCHECK)", () => {
  const redis = useTestRedis("health");
  let worker: Service | undefined;
  beforeAll(async () => {
    worker = await startService({
      config: loadConfig({
        REDIS_URL: redis.url,
        MONEYQ_REDIS_PREFIX: redis.prefix,
        MONEYQ_LOG_LEVEL: "silent",
      }),
      role: "worker",
      metricsPort: 0,
      logger: createLogger("silent"),
    });
  });
  afterAll(async () => {
    await worker?.close();
  });

  it("exits 0 when a worker-only process answers on its metrics port", async () => {
    const port = new URL((worker as Service).metricsUrl).port;
    // Nothing listens on the API port: the check falls through to the metrics port.
    const result = await runCli(["healthcheck"], {
      MONEYQ_API_PORT: "1",
      MONEYQ_METRICS_PORT: port,
    });
    expect(result).toMatchObject({
      code: 0,
      stdout: `healthy: http://127.0.0.1:${port}/healthz\n`,
    });
  });

  it("exits 1 naming where it looked when nothing answers", async () => {
    const result = await runCli(["healthcheck", "--timeout-ms", "500"], {
      MONEYQ_API_PORT: "1",
      MONEYQ_METRICS_PORT: "2",
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      "no healthy moneyq process at http://127.0.0.1:1/healthz or http://127.0.0.1:2/healthz",
    );
  });
});

describe("deploy/docker-compose.yml", () => {
  it("parses with docker-compose, and every file it mounts exists", () => {
    const compose = composeConfig();
    expect(Object.keys(compose.services).sort()).toEqual([
      "api",
      "grafana",
      "prometheus",
      "redis",
      "sandbox",
      "worker",
    ]);
    expect(compose.services.worker.deploy.replicas).toBeGreaterThan(1);
    expect(compose.services.worker.command).toEqual([
      "node",
      "bin/moneyq.js",
      "start",
      "--role",
      "worker",
    ]);
    for (const service of Object.values(compose.services) as { volumes?: string[] }[]) {
      for (const volume of service.volumes ?? []) {
        const source = volume.split(":")[0] as string;
        if (source.startsWith("/")) expect(existsSync(source), volume).toBe(true);
      }
    }
    const prometheus = parse(readFileSync(join(ROOT, "deploy/prometheus/prometheus.yml"), "utf8"));
    const sd = prometheus.scrape_configs[0].dns_sd_configs;
    expect(sd).toEqual([
      expect.objectContaining({ names: ["api"], port: 8080 }),
      expect.objectContaining({ names: ["worker"], port: 9464 }),
    ]);
  });

  it("gives moneyq a configuration it accepts, with the variables a user sets taking over", () => {
    const byDefault = loadConfig(composeConfig().services.api.environment);
    expect(byDefault).toMatchObject({ requireSafeRedis: true, redisUrl: "redis://redis:6379" });
    expect(byDefault.api.tokens.map((t) => t.name)).toEqual(["ops"]);
    const own = composeConfig({
      PAYMENTS_API_URL: "https://payments.example.com/v1",
      PAYMENTS_API_KEY: "sk_live_user_key_0001",
    }).services.worker.environment;
    expect(loadConfig(own).paymentsApiUrl).toBe("https://payments.example.com/v1");
  });

  it("runs Redis with settings moneyq's safety check accepts (AOF, noeviction)", async () => {
    const command: string[] = composeConfig().services.redis.command;
    expect(command[0]).toBe("redis-server");
    const server = await startPrivateRedis(
      installed("redis-server", "redis-server"),
      command.slice(1),
    );
    const connection = new Redis(server.url);
    try {
      expect(await checkRedisSafety(connection)).toMatchObject({ safe: true, warnings: [] });
    } finally {
      connection.disconnect();
      await server.stop();
    }
  });
});
