import { setTimeout as sleep } from "node:timers/promises";
import { PaymentsRateLimitError } from "../client/errors.js";
import type { AccountConfig, Config } from "../config/load-config.js";
import { MoneyqError } from "../errors/moneyq-error.js";
import { createLogger } from "../logger.js";
import { rateLimitPauseMs } from "../processors/classify.js";
import { RateGate } from "../processors/rate-gate.js";
import { takeReadSlot } from "../processors/read-slot.js";
import { accountQueueName } from "../queues/queue-names.js";
import { bullKeys } from "../redis/bullmq-internals.js";
import { closeRedis } from "../redis/close.js";
import { createRedis, type RedisConnection } from "../redis/connection.js";
import { keyspace } from "../redis/keys.js";
import { pingRedis } from "../redis/private-redis.js";
import { redactUrl } from "../redis/redact-url.js";
import { CliError } from "./cli-error.js";

/** Sends one of the check's requests, or refuses it before it leaves. */
export type Gated = <T>(call: () => Promise<T>) => Promise<T>;

/**
 * Each read takes two slots: a new process's requests leave late (cold code, a new connection to
 * the provider), as a worker's first ones do (processors/take-slot.ts), and every read of the
 * check is one of those.
 */
const COLD_WEIGHT = 2;
/** A 429's pause up to this long (in all, for one read) is waited out; a longer one refuses it. */
const PAUSE_WAIT_MS = 10_000;
/** Slots a read may wake up late for before it gives up (as a worker hands its job back). */
const SLOT_TRIES = 3;
/** A gate command that gets no answer in this long fails the read instead of hanging the check. */
const COMMAND_TIMEOUT_MS = 5_000;

/** Why one of the check's reads was not sent (its account paused, the gate out of reach). */
export class ReadNotSentError extends MoneyqError {
  readonly code = "read_not_sent";
  constructor(message: string) {
    super(message);
  }
}

/** The gate of each account's reads, and the Redis connection behind it. */
export interface CheckGate {
  /** The Redis (redacted) and prefix whose gate the reads take. */
  readonly where: string;
  gatedFor(account: AccountConfig): Gated;
  /** Whether a service has opened the account's queue under this prefix on this Redis. */
  served(account: AccountConfig): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * The accounts' rate gate on the service's Redis: REDIS_URL, or the default address, which a
 * service with a real provider uses too when REDIS_URL is unset (redis/service-redis.ts). It
 * must answer: a check that cannot take its slots sends nothing.
 */
export async function openCheckGate(config: Config): Promise<CheckGate> {
  const url = redactUrl(config.redisUrl);
  try {
    await pingRedis(config.redisUrl);
  } catch (error) {
    throw new CliError(
      `Redis does not answer at ${url} (${(error as Error).message}): the check's reads take slots of each account's rate there; set REDIS_URL and MONEYQ_REDIS_PREFIX as your moneyq service has them`,
    );
  }
  const connection = createRedis(
    config.redisUrl,
    createLogger(config.logLevel, process.stderr),
    "provider-check",
    { maxRetriesPerRequest: 1, commandTimeout: COMMAND_TIMEOUT_MS },
  );
  const gate = new RateGate(connection, config.redisPrefix, config.pipeline.rateWindowMarginMs);
  // As late as a worker's request may leave after its slot.
  const toleranceMs = config.pipeline.rateWindowMarginMs / 2;
  return {
    where: `${url}, prefix ${config.redisPrefix}`,
    gatedFor: (account) => throughGate(gate, account, toleranceMs),
    served: (account) => queueOpened(connection, config.redisPrefix, account.alias),
    close: () => closeRedis(connection),
  };
}

/** BullMQ writes a queue's meta hash when a Queue is opened on it, as every service does. */
async function queueOpened(
  connection: RedisConnection,
  prefix: string,
  alias: string,
): Promise<boolean> {
  const queueKey = bullKeys.queue(
    prefix,
    accountQueueName(keyspace(prefix, connection.isCluster), alias),
  );
  return (await connection.exists(bullKeys.meta(queueKey))) === 1;
}

/**
 * The check's reads take slots of the account's rate, as a worker's lookups do (the lookup lane:
 * a provider check runs beside a service that may be using the whole rate), and none leaves
 * while the account is paused; a 429 the check meets pauses the account for every process.
 */
function throughGate(gate: RateGate, account: AccountConfig, toleranceMs: number): Gated {
  return async (call) => {
    await takeSlot(gate, account, toleranceMs).catch((error: unknown) => {
      if (error instanceof ReadNotSentError) throw error;
      throw new ReadNotSentError(
        `not sent: the account's rate gate failed (${(error as Error).message})`,
      );
    });
    try {
      return await call();
    } catch (error) {
      if (error instanceof PaymentsRateLimitError) await storePause(gate, account, error);
      throw error;
    }
  };
}

/** A pause that cannot be stored is said, but the 429 stays the read's outcome. */
async function storePause(
  gate: RateGate,
  account: AccountConfig,
  error: PaymentsRateLimitError,
): Promise<void> {
  try {
    await gate.pause(account.alias, rateLimitPauseMs(error.retryAfterMs));
  } catch (failure) {
    process.stderr.write(
      `the 429's pause of account ${account.alias} could not be stored: ${(failure as Error).message}\n`,
    );
  }
}

async function takeSlot(
  gate: RateGate,
  account: AccountConfig,
  toleranceMs: number,
): Promise<void> {
  const { alias, ratePerSecond } = account;
  let pausedFor = 0;
  let late = 0;
  for (;;) {
    const slot = await takeReadSlot(gate, {
      account: alias,
      perSecond: ratePerSecond,
      lane: "lookup",
      weight: COLD_WEIGHT,
      toleranceMs,
    });
    if (slot.send) return;
    if ("held" in slot) throw held(alias);
    if ("late" in slot || "yielded" in slot) {
      late += 1;
      if (late >= SLOT_TRIES) throw lateEveryTime(alias);
      continue;
    }
    pausedFor += slot.pausedMs;
    if (pausedFor > PAUSE_WAIT_MS) throw pausedTooLong(alias, slot.pausedMs);
    await sleep(slot.pausedMs);
  }
}

const held = (alias: string) =>
  new ReadNotSentError(
    `not sent: the account ${alias} is paused in moneyq (by an operator, or after the provider refused its key): resume it (POST /v1/accounts/${alias}/resume) and run the check again`,
  );

const pausedTooLong = (alias: string, ms: number) =>
  new ReadNotSentError(
    `not sent: the account ${alias} is paused for ${Math.ceil(ms / 1000)} s more (the provider's Retry-After): run the check again after it`,
  );

const lateEveryTime = (alias: string) =>
  new ReadNotSentError(
    `not sent: this process woke up late for each of ${SLOT_TRIES} slots of the account ${alias} (an overloaded host): run the check again`,
  );
