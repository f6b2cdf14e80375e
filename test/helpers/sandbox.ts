import { request } from "undici";
import { afterAll, beforeAll } from "vitest";
import type {
  FaultSettingsInput,
  RunningSandbox,
  SandboxOptions,
} from "../../src/sandbox/index.js";
import { startSandbox } from "../../src/sandbox/index.js";

export interface HttpAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  // biome-ignore lint/suspicious/noExplicitAny: test answers are inspected field by field.
  readonly body: any;
}

export interface CallOptions {
  readonly key?: string | null;
  readonly idem?: string;
  readonly body?: unknown;
  readonly rawBody?: string;
  readonly contentType?: string;
  readonly query?: Record<string, string | number>;
}

/** One HTTP request to the sandbox, as raw as a provider's client would send it. */
export async function call(
  url: string,
  method: string,
  options: CallOptions = {},
): Promise<HttpAnswer> {
  const headers: Record<string, string> = {};
  if (options.key) headers["x-api-key"] = options.key;
  if (options.idem !== undefined) headers.idempotencykey = options.idem;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers["content-type"] = options.contentType ?? "application/json";
  const q = options.query
    ? `?${new URLSearchParams(Object.entries(options.query).map(([k, v]): [string, string] => [k, String(v)]))}`
    : "";
  const res = await request(`${url}${q}`, { method: method as "GET", headers, body: body ?? null });
  const text = await res.body.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.statusCode, headers: res.headers, body: parsed };
}

export interface TestSandbox {
  readonly sandbox: RunningSandbox;
  /** Calls the Payments API (`path` relative to /v1) as the first account by default. */
  api(method: string, path: string, options?: CallOptions): Promise<HttpAnswer>;
  /** Calls the control API (`path` relative to /__sandbox). */
  control(method: string, path: string, options?: CallOptions): Promise<HttpAnswer>;
  /** A fresh account over the control API. */
  newAccount(extra?: {
    faults?: FaultSettingsInput;
    balances?: Record<string, number>;
  }): Promise<{ accountId: string; apiKey: string }>;
  wallet(
    accountId: string,
    currency: string,
  ): Promise<{ availableBalance: number; heldBalance: number; walletId: string }>;
  advance(ms: number): Promise<void>;
  invariants(): Promise<{ ok: boolean; violations: string[] }>;
}

/** A sandbox on a real port for one test file, closed after it. */
export function useSandbox(options: SandboxOptions = {}): TestSandbox {
  let sandbox: RunningSandbox | undefined;
  beforeAll(async () => {
    sandbox = await startSandbox(options);
  });
  afterAll(async () => {
    await sandbox?.close();
  });
  const running = () => {
    if (!sandbox) throw new Error("sandbox not started");
    return sandbox;
  };
  const self: TestSandbox = {
    get sandbox() {
      return running();
    },
    api: (method, path, o = {}) =>
      call(`${running().baseUrl}${path}`, method, {
        ...o,
        key: o.key === undefined ? running().apiKey : o.key,
      }),
    control: (method, path, o = {}) => call(`${running().controlUrl}${path}`, method, o),
    async newAccount(extra = {}) {
      const res = await self.control("POST", "/accounts", { body: extra });
      if (res.status !== 200) throw new Error(`newAccount: ${JSON.stringify(res.body)}`);
      return res.body.data;
    },
    async wallet(accountId, currency) {
      const res = await self.control("GET", "/accounts");
      const account = res.body.data.accounts.find(
        (a: { accountId: string }) => a.accountId === accountId,
      );
      const wallet = account?.wallets.find((w: { currency: string }) => w.currency === currency);
      if (!wallet) throw new Error(`no ${currency} wallet for ${accountId}`);
      return wallet;
    },
    async advance(ms) {
      await self.control("POST", "/clock/advance", { body: { ms } });
    },
    async invariants() {
      return (await self.control("GET", "/invariants")).body.data;
    },
  };
  return self;
}
