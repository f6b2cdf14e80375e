import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { exitOf } from "./cli.js";

const root = join(import.meta.dirname, "..", "..");

export interface ServiceProcess {
  readonly child: ChildProcess;
  /** The API's address, from its start-up log line. */
  readonly apiUrl: string;
  /** SIGTERM, then the exit code once it has closed (tracing flushed last). */
  stop(): Promise<number | null>;
  /** Every module the process loaded: "esm URL" and "cjs PATH" lines (after `stop`). */
  modules(): string[];
  /** Every line the process wrote to stdout so far (its log, one JSON object a line). */
  logLines(): string[];
}

const work = mkdtempSync(join(tmpdir(), "moneyq-service-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/**
 * `moneyq start` as installed (bin/moneyq.js on dist/), its API on a free port, every module it
 * loads recorded (test/helpers/record-modules.mjs). Killed after the file if still running.
 */
export async function startServiceProcess(env: Record<string, string>): Promise<ServiceProcess> {
  const modulesFile = join(work, `${randomUUID()}.txt`);
  const child = spawn(
    process.execPath,
    [
      "--import",
      join(root, "test/helpers/record-modules.mjs"),
      join(root, "bin/moneyq.js"),
      "start",
    ],
    {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? "",
        RECORD_MODULES_FILE: modulesFile,
        MONEYQ_API_PORT: "0",
        MONEYQ_LOG_LEVEL: "info",
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  afterAll(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  let err = "";
  child.stderr?.on("data", (c: Buffer) => {
    err += c.toString();
  });
  let out = "";
  const apiUrl = await new Promise<string>((resolve, reject) => {
    child.stdout?.on("data", (c: Buffer) => {
      out += c.toString();
      const line = out.split("\n").find((l) => l.includes('"API listening on'));
      if (line) resolve(JSON.parse(line).api as string);
    });
    child.once("exit", (code) => reject(new Error(`moneyq start exited with ${code}: ${err}`)));
  });
  return {
    child,
    apiUrl,
    async stop() {
      child.kill("SIGTERM");
      return exitOf(child);
    },
    modules: () => readFileSync(modulesFile, "utf8").split("\n").filter(Boolean),
    logLines: () => out.split("\n").filter((l) => l.trim() !== ""),
  };
}

/** An answer of a service process's API: its status, its text, and that text as JSON. */
export interface ProcessAnswer {
  readonly status: number;
  readonly text: string;
  // biome-ignore lint/suspicious/noExplicitAny: answers are inspected field by field
  json(): any;
}

/**
 * Calls the API of `service()` (read at each call: the process may start after this is made)
 * with `token`; a body is sent as CSV unless `type` names another type.
 */
export function processApi(service: () => ServiceProcess | undefined, token: string) {
  return async (
    method: string,
    path: string,
    body?: string,
    type = "text/csv",
  ): Promise<ProcessAnswer> => {
    const res = await fetch(`${service()?.apiUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined && { "content-type": type }),
      },
      ...(body !== undefined && { body }),
    });
    const text = await res.text();
    return { status: res.status, text, json: () => JSON.parse(text) };
  };
}
