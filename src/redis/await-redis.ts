import { errorCode } from "../contract/error-code.js";
import { pingRedis } from "./private-redis.js";

/** Time between attempts while a Redis is starting. */
const RETRY_MS = 250;
/** Longest single attempt. */
const ATTEMPT_MS = 2_000;

/** What a failed attempt says, in words: refused, timed out, or still loading its data. */
export function redisFailureReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = errorCode(error);
  if (code === "ECONNREFUSED" || message.includes("ECONNREFUSED")) return "connection refused";
  if (code === "ETIMEDOUT" || message.includes("ETIMEDOUT")) return "connection timed out";
  if (message.startsWith("LOADING")) return "still loading its data (LOADING)";
  return message;
}

/**
 * Pings the Redis at `url` until it answers or `deadlineMs` has passed: a Redis started
 * alongside this process may refuse connections or answer LOADING for a while. Rejects with
 * the last attempt's reason, in words.
 */
export async function awaitRedis(url: string, deadlineMs: number): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  let attempts = 0;
  for (;;) {
    attempts += 1;
    try {
      await pingRedis(url, ATTEMPT_MS);
      return;
    } catch (error) {
      const reason = redisFailureReason(error);
      if (Date.now() + RETRY_MS > deadline) {
        throw new Error(
          attempts === 1 ? reason : `${reason}, after ${attempts} attempts in ${deadlineMs} ms`,
        );
      }
      await new Promise((r) => setTimeout(r, RETRY_MS));
    }
  }
}
