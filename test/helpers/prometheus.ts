import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../src/redis/private-redis.js";
import { installed } from "./installed.js";

export interface QueryAnswer {
  readonly status: string;
  readonly errorType?: string;
  readonly error?: string;
  readonly data?: { resultType: string; result: unknown[] };
}

export interface TestPrometheus {
  readonly url: string;
  /** An instant query through the HTTP API. */
  query(expr: string): Promise<QueryAnswer>;
  // biome-ignore lint/suspicious/noExplicitAny: Prometheus answers of several shapes
  get(path: string): Promise<any>;
  close(): Promise<void>;
}

/**
 * A real Prometheus scraping `targets` (host:port) every second, evaluating `ruleFiles`
 * every second, with its data in a temporary directory removed by close().
 */
export async function startPrometheus(
  targets: readonly string[],
  ruleFiles: readonly string[],
): Promise<TestPrometheus> {
  const dir = await mkdtemp(join(tmpdir(), "moneyq-prometheus-"));
  const config = [
    "global:",
    "  scrape_interval: 1s",
    "  evaluation_interval: 1s",
    "rule_files:",
    ...ruleFiles.map((f) => `  - ${JSON.stringify(f)}`),
    "scrape_configs:",
    "  - job_name: moneyq",
    "    static_configs:",
    `      - targets: ${JSON.stringify(targets)}`,
  ].join("\n");
  await writeFile(join(dir, "prometheus.yml"), `${config}\n`);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let log = "";
  const child: ChildProcess = spawn(
    installed("prometheus", "prometheus"),
    [
      `--config.file=${join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  child.stderr?.on("data", (c: Buffer) => {
    log = (log + c.toString()).slice(-4000);
  });
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await gone;
    }
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      await close();
      throw new Error(`prometheus did not become ready:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const get = async (path: string) => (await fetch(`${url}${path}`)).json();
  return {
    url,
    get,
    query: async (expr) =>
      (await get(`/api/v1/query?query=${encodeURIComponent(expr)}`)) as QueryAnswer,
    close,
  };
}
