import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";

// Paystream (foreign-provider.mjs): a fake provider written from the spec alone, in a dialect
// of its own, run in its own process. This file only starts, reads and stops it.

const program = join(import.meta.dirname, "foreign-provider.mjs");
const STARTUP_TIMEOUT_MS = 10_000;
const STOP_GRACE_MS = 5_000;

/** The key used when a test names none. */
export const FOREIGN_DEFAULT_API_KEY = "paystream-test-key";

export interface ForeignProviderOptions {
  /** Requests admitted per API key in any sliding second (the provider's default: 50). */
  rateLimit?: number;
  /** One merchant per key; `[FOREIGN_DEFAULT_API_KEY]` when not given. */
  apiKeys?: readonly string[];
  /** When settling transfers, withdrawals and orders change state (default 1000 ms). */
  settleMs?: number;
  /** How long an idempotent create holds its key before answering (default 20 ms). */
  processMs?: number;
}

export type ForeignRecordState = "processing" | "completed" | "failed" | "reversed";

interface ForeignRecordBase {
  /** The index of the record's API key in `apiKeys` ("0", "1", ...), never the key. */
  readonly merchant: string;
  readonly id: number;
  readonly state: ForeignRecordState;
  readonly amount: string;
  /** The idempotency key it was created under. */
  readonly reference: string;
  readonly failure_reason: string | null;
  readonly created_at: string;
  /** When it last changed state (its creation if never). */
  readonly updated_at: string;
}

/** A bank, mobile money or funding transfer (4.1, 4.2, 4.3). */
export interface ForeignTransferRecord extends ForeignRecordBase {
  readonly kind: "bank_transfer" | "mobile_money" | "funding";
  readonly currency: string;
  /** The request's relevant fields, snake_case; absent optional ones are null. */
  readonly beneficiary: Readonly<Record<string, string | null>>;
}

/** A stable-currency withdrawal (4.4). */
export interface ForeignStableWithdrawalRecord extends ForeignRecordBase {
  readonly kind: "stable_withdrawal";
  readonly asset: "USDT" | "USDC";
  readonly chain: "polygon" | "arbitrum" | "base" | "solana";
  readonly to_address: string;
  readonly sub_account_id: string;
}

/** An exchange order, from an offer (4.18) or a payment link (4.19). */
export interface ForeignOrderRecord extends ForeignRecordBase {
  readonly kind: "exchange_order" | "payment_link_order";
  readonly offer_id: string;
}

export type ForeignRecord =
  | ForeignTransferRecord
  | ForeignStableWithdrawalRecord
  | ForeignOrderRecord;

export interface ForeignWallet {
  readonly merchant: string;
  readonly id: number;
  readonly currency: string;
  readonly created_at: string;
}

export interface ForeignVirtualAccount {
  readonly merchant: string;
  readonly id: number;
  readonly account_number: string;
  readonly amount: string;
  readonly expires_at: string;
  readonly created_at: string;
}

/** One request under /v1, logged once answered. */
export interface ForeignLoggedRequest {
  readonly seq: number;
  /** Arrival, ms since the epoch. */
  readonly at: number;
  readonly method: string;
  /** The path without its query. */
  readonly path: string;
  readonly idempotencyKey: string | null;
  /** null when the request carried no valid API key. */
  readonly merchant: string | null;
  /** The HTTP status it was answered with (429 included). */
  readonly status: number;
}

/** GET /_control/state. */
export interface ForeignControlState {
  /** Every record of every merchant, oldest first, in its state as of the read. */
  readonly records: readonly ForeignRecord[];
  /** Records created under each idempotency key (summed over merchants). */
  readonly effects: Readonly<Record<string, number>>;
  readonly requests: readonly ForeignLoggedRequest[];
  readonly wallets: readonly ForeignWallet[];
  readonly virtualAccounts: readonly ForeignVirtualAccount[];
}

export interface ForeignProvider {
  readonly baseUrl: string;
  readonly controlUrl: string;
  readonly apiKeys: readonly string[];
  state(): Promise<ForeignControlState>;
  /** Forgets every record, key, request and rate window; ids start again. */
  reset(): Promise<void>;
}

export interface RunningForeignProvider extends ForeignProvider {
  /** Stops the process (SIGTERM, then SIGKILL after a grace). Safe to call twice. */
  stop(): Promise<void>;
}

interface Urls {
  readonly baseUrl: string;
  readonly controlUrl: string;
}

function argsOf(options: ForeignProviderOptions, apiKeys: readonly string[]): string[] {
  const args = ["--port", "0", ...apiKeys.flatMap((key) => ["--api-key", key])];
  if (options.rateLimit !== undefined) args.push("--rate-limit", String(options.rateLimit));
  if (options.settleMs !== undefined) args.push("--settle-ms", String(options.settleMs));
  if (options.processMs !== undefined) args.push("--process-ms", String(options.processMs));
  return args;
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** The URLs the program prints once listening; rejects if it exits or stays silent first. */
function listeningUrls(child: ChildProcess): Promise<Urls> {
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`foreign provider not listening after ${STARTUP_TIMEOUT_MS} ms: ${err}`));
    }, STARTUP_TIMEOUT_MS);
    child.stderr?.on("data", (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (!out.includes("\n")) return;
      clearTimeout(timer);
      try {
        resolve(JSON.parse(out.slice(0, out.indexOf("\n"))) as Urls);
      } catch {
        child.kill("SIGKILL");
        reject(new Error(`foreign provider printed ${JSON.stringify(out)}, not its URLs`));
      }
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`foreign provider exited (${code ?? signal}) before listening: ${err}`));
    });
  });
}

function stopper(child: ChildProcess): () => Promise<void> {
  // A test run that ends without its afterAll (a crash, a timeout) must not leave it running.
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  return async () => {
    process.off("exit", killOnExit);
    if (exited(child)) return;
    const done = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    const grace = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
    await done;
    clearTimeout(grace);
  };
}

async function readState(controlUrl: string): Promise<ForeignControlState> {
  const res = await fetch(`${controlUrl}/state`);
  if (res.status !== 200) throw new Error(`foreign provider state: HTTP ${res.status}`);
  return (await res.json()) as ForeignControlState;
}

async function resetState(controlUrl: string): Promise<void> {
  const res = await fetch(`${controlUrl}/reset`, { method: "POST" });
  await res.body?.cancel();
  if (res.status !== 200) throw new Error(`foreign provider reset: HTTP ${res.status}`);
}

/**
 * Starts Paystream in its own process on a free port and resolves once it listens. For
 * benchmarks and scripts; tests use `useForeignProvider`.
 */
export async function startForeignProvider(
  options: ForeignProviderOptions = {},
): Promise<RunningForeignProvider> {
  const apiKeys = [...(options.apiKeys ?? [FOREIGN_DEFAULT_API_KEY])];
  const child = spawn(process.execPath, [program, ...argsOf(options, apiKeys)], {
    env: { PATH: process.env.PATH ?? "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const { baseUrl, controlUrl } = await listeningUrls(child);
  return {
    baseUrl,
    controlUrl,
    apiKeys,
    state: () => readState(controlUrl),
    reset: () => resetState(controlUrl),
    stop: stopper(child),
  };
}

/**
 * Paystream for one test file: started in beforeAll, stopped in afterAll. Read its URLs and
 * state inside tests or hooks, not at collection time.
 */
export function useForeignProvider(options: ForeignProviderOptions = {}): ForeignProvider {
  let provider: RunningForeignProvider | undefined;
  beforeAll(async () => {
    provider = await startForeignProvider(options);
  });
  afterAll(async () => {
    await provider?.stop();
  });
  const running = () => {
    if (!provider) throw new Error("foreign provider not started");
    return provider;
  };
  return {
    get baseUrl() {
      return running().baseUrl;
    },
    get controlUrl() {
      return running().controlUrl;
    },
    get apiKeys() {
      return running().apiKeys;
    },
    state: () => running().state(),
    reset: () => running().reset(),
  };
}
