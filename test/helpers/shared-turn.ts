import type { RedisConnection } from "../../src/redis/connection.js";
import { turnKeys, turnWakeChannel } from "../../src/redis/keys.js";

/** Requests a worker process sent for `account`, from its metrics. */
export async function sentFor(metricsUrl: string, account: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  const line = text
    .split("\n")
    .find(
      (l) => l.startsWith("moneyq_upstream_requests_total{") && l.includes(`account="${account}"`),
    );
  return Number(line?.split(" ").at(-1) ?? 0);
}

/**
 * Has every worker process serve `account` at once, as after a lease that lapsed while its
 * holder was frozen: processes take turns at an account (processors/account-turns.ts), so
 * normally one serves it. Takes the account's lease away and rings until each process has
 * sent a request for it (or `boundMs` passes); answers whether they all did.
 *
 * The first process to look for turns after the lease is taken away gets it. Left to their
 * half-second ticks, that is decided by the ticks' phases, which can favour the holder every
 * time: so each round wakes every process at once (the process not serving, idle, is then
 * usually first), and waits a random while, not in step with the ticks.
 */
export async function shareTurn(
  redis: RedisConnection,
  prefix: string,
  account: string,
  metricsUrls: readonly string[],
  boundMs = 30_000,
): Promise<boolean> {
  const { due, held } = turnKeys(prefix);
  const until = Date.now() + boundMs;
  while (Date.now() < until) {
    const sent = await Promise.all(metricsUrls.map((url) => sentFor(url, account)));
    if (sent.every((n) => n > 0)) return true;
    await redis.multi().zrem(held, account).zadd(due, Date.now(), account).exec();
    await redis.publish(turnWakeChannel(prefix), account);
    await new Promise((r) => setTimeout(r, 200 + Math.random() * 300));
  }
  return false;
}
