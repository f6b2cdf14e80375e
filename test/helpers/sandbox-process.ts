import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll } from "vitest";
import type { LoggedRequest } from "../../src/sandbox/request-log.js";
import { exitOf, spawnCli } from "./cli.js";
import { call } from "./sandbox.js";

export interface SandboxProcess {
  readonly baseUrl: string;
  readonly controlUrl: string;
  /** Adds an account (with its faults) over the control API. */
  addAccount(accountId: string, apiKey: string, faults?: Record<string, unknown>): Promise<void>;
  /** The account's requests the sandbox logged, after `afterSeq` if given. */
  requests(accountId: string, afterSeq?: number): Promise<LoggedRequest[]>;
}

/**
 * The sandbox in its own process, as a provider would be (`moneyq sandbox`), for one test file:
 * what it measures is not disturbed by the test process. `args` are extra CLI flags.
 */
export function useSandboxProcess(args: readonly string[] = []): SandboxProcess {
  let child: ChildProcess | undefined;
  let urls: { baseUrl: string; controlUrl: string } | undefined;
  beforeAll(async () => {
    const started = spawnCli(["sandbox", "--port", "0", "--json", ...args]);
    child = started;
    urls = JSON.parse(
      await new Promise<string>((resolve) => {
        let out = "";
        started.stdout?.on("data", (c: Buffer) => {
          out += c.toString();
          if (out.includes("\n")) resolve(out);
        });
      }),
    );
  });
  afterAll(async () => {
    if (child) {
      child.kill("SIGTERM");
      await exitOf(child);
    }
  });
  const running = () => {
    if (!urls) throw new Error("sandbox process not started");
    return urls;
  };
  return {
    get baseUrl() {
      return running().baseUrl;
    },
    get controlUrl() {
      return running().controlUrl;
    },
    async addAccount(accountId, apiKey, faults) {
      const res = await call(`${running().controlUrl}/accounts`, "POST", {
        body: { accountId, apiKey, ...(faults && { faults }) },
      });
      if (res.status !== 200) throw new Error(`addAccount: ${JSON.stringify(res.body)}`);
    },
    async requests(accountId, afterSeq) {
      const res = await call(`${running().controlUrl}/requests`, "GET", {
        query: { accountId, ...(afterSeq !== undefined && { afterSeq }) },
      });
      return res.body.data.requests as LoggedRequest[];
    },
  };
}
