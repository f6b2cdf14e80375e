import { MoneyqError } from "../errors/moneyq-error.js";
import { redactUrl } from "./redact-url.js";

/** Why moneyq looked for a Redis where it did, for the error that says what to do. */
export type RedisSource =
  /** Embedded development mode: a private redis-server could have stood in, but none is installed. */
  | "embedded"
  /** REDIS_URL was set: moneyq uses that Redis and no other. */
  | "REDIS_URL"
  /** No REDIS_URL, but PAYMENTS_API_URL is set: real money needs a Redis of its own. */
  | "default"
  /** MONEYQ_REQUIRE_SAFE_REDIS is set: a private redis-server keeps nothing, so it cannot stand in. */
  | "require-safe";

/** The Redis moneyq is to use does not answer, and nothing may (or can) stand in for it. */
export class RedisUnavailableError extends MoneyqError {
  readonly code = "redis_unavailable";
  constructor(url: string, reason: string, source: RedisSource = "embedded") {
    super(messageFor(redactUrl(url), reason, source));
  }
}

function messageFor(url: string, reason: string, source: RedisSource): string {
  switch (source) {
    case "REDIS_URL":
      return (
        `REDIS_URL does not answer: ${url} (${reason}). moneyq uses the Redis REDIS_URL names ` +
        "and starts no other; start that Redis or correct REDIS_URL."
      );
    case "default":
      return (
        `Redis does not answer at ${url} (${reason}), the address used when REDIS_URL is not set. ` +
        "With PAYMENTS_API_URL set, moneyq needs a Redis that keeps its jobs: set REDIS_URL."
      );
    case "require-safe":
      return (
        `Redis does not answer at ${url} (${reason}), and MONEYQ_REQUIRE_SAFE_REDIS is set: a ` +
        "private redis-server would keep nothing on disk. Set REDIS_URL to a Redis with persistence."
      );
    default:
      return (
        `Redis does not answer at ${url} (${reason}) and no redis-server is installed ` +
        "to start a private one. Install Redis (Debian/Ubuntu: apt-get install redis-server; " +
        "macOS: brew install redis) or set REDIS_URL to a running Redis."
      );
  }
}
