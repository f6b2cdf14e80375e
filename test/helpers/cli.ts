import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";

const root = join(import.meta.dirname, "..", "..");

/** Runs the moneyq CLI from source (tsx), as `moneyq ARGS`. */
export function spawnCli(args: readonly string[], env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", join(root, "src/cli/main.ts"), ...args], {
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
