import { redactUrl } from "./redact-url.js";

/** Neither the configured Redis nor a private redis-server could be had. */
export class RedisUnavailableError extends Error {
  readonly code = "redis_unavailable";
  constructor(url: string, reason: string) {
    super(
      `Redis does not answer at ${redactUrl(url)} (${reason}) and no redis-server is installed ` +
        "to start a private one. Install Redis (Debian/Ubuntu: apt-get install redis-server; " +
        "macOS: brew install redis) or set REDIS_URL to a running Redis.",
    );
    this.name = "RedisUnavailableError";
  }
}
