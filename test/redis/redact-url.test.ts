import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { createLogger } from "../../src/logger.js";
import { redactUrl } from "../../src/redis/redact-url.js";
import { RedisUnavailableError } from "../../src/redis/unavailable-error.js";
import { startService } from "../../src/service/start-service.js";

/** [url, what is printed, the secret that must not be]. */
const table: [string, string, string][] = [
  ["redis://:s3cr#t@127.0.0.1:6379", "redis: (unreadable URL, hidden)", "s3cr"],
  ["redis://:s3cr?t@127.0.0.1:6379", "redis: (unreadable URL, hidden)", "s3cr"],
  ["redis://:s3cr/t@127.0.0.1:6379", "redis: (unreadable URL, hidden)", "s3cr"],
  ["redis://user:s3cr/t#x?y@127.0.0.1:6379/0", "redis: (unreadable URL, hidden)", "s3cr"],
  // Parses, as host "u" and port 1234: the text after `//` up to the last `@` is still hidden.
  ["redis://u:1234/s3cr@host:6379", "redis://***@host:6379", "s3cr"],
  ["redis://:p@ss:w0rd@127.0.0.1:6379", "redis://***@127.0.0.1:6379", "w0rd"],
  ["rediss://admin:s3cret@[::1]:6380/2", "rediss://***@[::1]:6380/2", "s3cret"],
  ["redis://:s3cret@[2001:db8::1]:6379", "redis://***@[2001:db8::1]:6379", "s3cret"],
  ["https://user:s3cret@pay.example/v1", "https://***@pay.example/v1", "s3cret"],
  // An `@` in the path or query: more is hidden than needed, never the password less.
  ["redis://:s3cret@h:6379/0?name=a@b", "redis://***@b", "s3cret"],
  ["https://pay.example/v1/a@b", "https://***@b", "pay.example/v1/a"],
  ["redis://127.0.0.1:6379", "redis://127.0.0.1:6379", "\u0000"],
  ["redis://[::1]:6379/0", "redis://[::1]:6379/0", "\u0000"],
  ["not a url at all s3cret", "(unreadable URL, hidden)", "s3cret"],
  // A cluster's seed list.
  [
    "redis+cluster://:s3cret@10.0.0.1:6379,10.0.0.2:6379",
    "redis+cluster://***@10.0.0.1:6379,10.0.0.2:6379",
    "s3cret",
  ],
  ["rediss+cluster://u:p%40ss@h1:1,[::1]:2", "rediss+cluster://***@h1:1,[::1]:2", "p%40ss"],
  ["redis+cluster://:s3cr#t@h1:1", "redis+cluster://***@h1:1", "s3cr"],
];

describe("redactUrl", () => {
  it.each(table)("%s", (url, printed, secret) => {
    expect(redactUrl(url)).toBe(printed);
    expect(redactUrl(url)).not.toContain(secret);
  });
});

describe("a REDIS_URL whose password holds an unencoded '#'", () => {
  it("is refused at start without printing the password", async () => {
    const error = await startService({
      config: loadConfig({ REDIS_URL: "redis://:s3cr#t@127.0.0.1:1", MONEYQ_API_PORT: "0" }),
      logger: createLogger("silent"),
    }).then(
      async (service) => {
        await service.close();
        return new Error("started");
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RedisUnavailableError);
    expect((error as Error).message).toMatch(
      /^REDIS_URL does not answer: redis: \(unreadable URL, hidden\) /,
    );
    expect((error as Error).message).not.toContain("s3cr");
  }, 30_000);
});
