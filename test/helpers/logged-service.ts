import { Writable } from "node:stream";
import { afterAll, beforeAll } from "vitest";
import { type Config, loadConfig } from "../../src/config/load-config.js";
import { createLogger } from "../../src/logger.js";
import { type Service, startService } from "../../src/service/start-service.js";
import { useTestRedis } from "./redis.js";
import { useSandbox } from "./sandbox.js";
import { ALPHA_TOKEN, BETA_TOKEN, BOTH_TOKEN } from "./service.js";

export { ALPHA_TOKEN, BETA_TOKEN, BOTH_TOKEN };

const ALPHA_KEY = "sk_sandbox_alpha_key_000001";
const BETA_KEY = "sk_sandbox_beta_key_0000001";

/** One line the service logged, parsed. */
// biome-ignore lint/suspicious/noExplicitAny: log lines carry many shapes
export type LogLine = Record<string, any> & { level: number; msg: string };

/**
 * The whole service over a sandbox with accounts alpha and beta (the same tokens as
 * test/helpers/service.ts), logging at debug level into memory so that tests can read
 * every line it wrote.
 */
export function useLoggedService(env: Record<string, string> = {}) {
  const sb = useSandbox({
    settleDelayMs: 20,
    accounts: [
      { accountId: "acct_alpha", apiKey: ALPHA_KEY },
      { accountId: "acct_beta", apiKey: BETA_KEY },
    ],
  });
  const redis = useTestRedis("sec");
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString("utf8").split("\n"))
        if (text.trim() !== "") lines.push(JSON.parse(text) as LogLine);
      done();
    },
  });
  let service: Service | undefined;
  let config: Config | undefined;
  beforeAll(async () => {
    config = loadConfig({
      REDIS_URL: redis.url,
      PAYMENTS_API_URL: sb.sandbox.baseUrl,
      MONEYQ_ACCOUNTS: JSON.stringify([
        { alias: "alpha", apiKey: ALPHA_KEY },
        { alias: "beta", apiKey: BETA_KEY },
      ]),
      MONEYQ_API_TOKENS: JSON.stringify([
        { name: "alpha-ops", token: ALPHA_TOKEN, accounts: ["alpha"] },
        { name: "beta-ops", token: BETA_TOKEN, accounts: ["beta"] },
        { name: "both", token: BOTH_TOKEN, accounts: ["alpha", "beta"] },
      ]),
      MONEYQ_API_PORT: "0",
      MONEYQ_REDIS_PREFIX: redis.prefix,
      MONEYQ_RATE_LIMIT_PER_SECOND: "2000",
      MONEYQ_CONCURRENCY: "8",
      ...env,
    });
    service = await startService({ config, logger: createLogger("debug", sink) });
  });
  afterAll(async () => {
    await service?.close();
  });
  const running = () => {
    if (!service) throw new Error("service not started");
    return service;
  };
  return {
    sb,
    redis,
    lines,
    service: running,
    config: () => config as Config,
    url: () => running().apiUrl as string,
    /** Calls the API; `body` as a string is sent as it is. */
    async api(
      method: string,
      path: string,
      options: {
        token?: string | null;
        body?: unknown;
        type?: string;
        headers?: Record<string, string>;
      } = {},
    ) {
      const headers: Record<string, string> = { ...options.headers };
      const token = options.token === undefined ? ALPHA_TOKEN : options.token;
      if (token !== null) headers.authorization = `Bearer ${token}`;
      let body: string | undefined;
      if (options.body !== undefined) {
        headers["content-type"] = options.type ?? "application/json";
        body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
      }
      const res = await fetch(`${running().apiUrl}${path}`, {
        method,
        headers,
        ...(body !== undefined && { body }),
      });
      const text = await res.text();
      // biome-ignore lint/suspicious/noExplicitAny: answers are inspected field by field
      let parsed: any;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      return { status: res.status, body: parsed, text, headers: res.headers };
    },
  };
}

export { bankJob } from "../fixtures/batches.js";
