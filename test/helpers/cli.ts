import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { onTestFinished } from "vitest";

const root = join(import.meta.dirname, "..", "..");

/** Runs the moneyq CLI as installed, `moneyq ARGS` (dist/, built by the global setup). */
export function spawnCli(args: readonly string[], env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, [join(root, "bin/moneyq.js"), ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI to completion. */
export function runCli(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<CliResult> {
  const child = spawnCli(args, env);
  // A test that times out must not leave its CLI running into the next tests.
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

/** A worker process started by `spawnWorker`. */
export interface WorkerProcess {
  readonly child: ChildProcess;
  readonly metricsUrl: string;
}

/**
 * Starts a worker process (test/helpers/worker-main.mjs) and resolves once it is ready. Its
 * metrics port is any free one, as several run on this host at once.
 */
export async function spawnWorker(env: Record<string, string>): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [join(root, "test/helpers/worker-main.mjs")], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", MONEYQ_METRICS_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  child.stderr?.on("data", (c: Buffer) => {
    err += c.toString();
  });
  const metricsUrl = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (c: Buffer) => {
      out += c.toString();
      const ready = /^ready (\S+)\n/m.exec(out);
      if (ready) resolve(ready[1] as string);
    });
    child.once("exit", (code) => reject(new Error(`worker exited with ${code}: ${err}`)));
  });
  return { child, metricsUrl };
}

/** Resolves with the exit code once `child` exits. */
export function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}
