import { setTimeout as sleep } from "node:timers/promises";
import { PaymentsRateLimitError } from "../client/errors.js";
import type { AccountConfig, Config } from "../config.js";
import { createLogger } from "../logger.js";
import { rateLimitPauseMs } from "../processors/classify.js";
import { RateGate } from "../processors/rate-gate.js";
import { closeRedis } from "../redis/close.js";
import { createRedis } from "../redis/connection.js";
import { pingRedis } from "../redis/private-redis.js";
import { redactUrl } from "../redis/redact-url.js";
import { CliError } from "./cli-error.js";

/** Sends one of the check's requests, or refuses it before it leaves. */
export type Gated = <T>(call: () => Promise<T>) => Promise<T>;

/** No gate: the check's requests leave at once (no service shares its Redis). */
export const UNGATED: Gated = (call) => call();

/**
 * Each read takes two slots: a new process's requests leave late (cold code, a new connection to
 * the provider), as a worker's first ones do (processors/take-slot.ts), and every read of the
 * check is one of those.
 */
const COLD_WEIGHT = 2;

/** A pause (a 429's Retry-After) up to this long is waited out; a longer one refuses the read. */
export const CHECK_PAUSE_WAIT_MS = 10_000;

/** Why one of the check's reads was not sent: the account's stored pause holds it. */
export class AccountHeldError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AccountHeldError";
  }
}

/**
 * The check's reads take slots of the account's rate, as a worker's lookups do (the lookup lane:
 * a provider check runs beside a service that may be using the whole rate), and none leaves
 * while the account is paused; a 429 the check meets pauses the account for every process.
 */
export function throughGate(gate: RateGate, account: AccountConfig): Gated {
  return async (call) => {
    await takeSlot(gate, account);
    try {
      return await call();
    } catch (error) {
      if (error instanceof PaymentsRateLimitError)
        await gate.pause(account.alias, rateLimitPauseMs(error.retryAfterMs));
      throw error;
    }
  };
}

async function takeSlot(gate: RateGate, account: AccountConfig): Promise<void> {
  const { alias, ratePerSecond } = account;
  let pausedFor = 0;
  for (;;) {
    const slot = await gate.reserve(alias, ratePerSecond, COLD_WEIGHT, undefined, {
      lane: "lookup",
    });
    if (slot.reserved && slot.delayMs < 1) return;
    let waitMs: number;
    if (slot.reserved) {
      await sleep(Math.ceil(slot.delayMs));
      // Reserved ahead: a pause may have come meanwhile, or this process woke up late.
      const clearance = await gate.clear(alias, slot.at, false);
      if (clearance.clear) return;
      if ("held" in clearance) throw held(alias);
      waitMs = "pausedMs" in clearance ? clearance.pausedMs : 0;
      pausedFor += waitMs;
    } else if ("held" in slot) {
      throw held(alias);
    } else if ("pausedMs" in slot) {
      waitMs = slot.pausedMs;
      pausedFor += waitMs;
    } else if ("retryInMs" in slot) {
      waitMs = slot.retryInMs;
    } else {
      // The other answers concern a job's lock, batch or "sent" record, which a read has none of.
      throw new Error(`the rate gate answered ${JSON.stringify(slot)} for a read`);
    }
    if (pausedFor > CHECK_PAUSE_WAIT_MS)
      throw new AccountHeldError(
        `not sent: the account ${alias} is paused for ${Math.ceil(waitMs / 1000)} s more (the provider's Retry-After): run the check again after it`,
      );
    await sleep(waitMs);
  }
}

const held = (alias: string) =>
  new AccountHeldError(
    `not sent: the account ${alias} is paused in moneyq (by an operator, or after the provider refused its key): resume it (POST /v1/accounts/${alias}/resume) and run the check again`,
  );

/** The gate of each account's reads, and the Redis connection behind it. */
export interface CheckGate {
  gatedFor(account: AccountConfig): Gated;
  close(): Promise<void>;
}

/**
 * The accounts' rate gate on the service's Redis (REDIS_URL), which must answer when it is set.
 * Unset, and nothing answers at the default address: no service shares a gate with this check
 * (a service without REDIS_URL runs a private Redis), so its reads leave ungated, as stderr says.
 */
export async function openCheckGate(config: Config): Promise<CheckGate> {
  const where = redactUrl(config.redisUrl);
  try {
    await pingRedis(config.redisUrl);
  } catch (error) {
    if (config.redisUrlSet)
      throw new CliError(
        `Redis does not answer at ${where} (${(error as Error).message}): set REDIS_URL to the Redis of your running moneyq service, whose rate gate the check's reads go through`,
      );
    process.stderr.write(
      `no Redis answers at ${where}: the check's reads go straight to the provider, outside any account's rate gate (set REDIS_URL to your moneyq service's Redis when one runs)\n`,
    );
    return { gatedFor: () => UNGATED, close: async () => undefined };
  }
  const connection = createRedis(
    config.redisUrl,
    createLogger(config.logLevel, process.stderr),
    "provider-check",
  );
  const gate = new RateGate(connection, config.redisPrefix, config.pipeline.rateWindowMarginMs);
  return {
    gatedFor: (account) => throughGate(gate, account),
    close: () => closeRedis(connection),
  };
}
