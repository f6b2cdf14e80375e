import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.js";
import { createRedis } from "../../src/redis/connection.js";
import { until } from "../helpers/service.js";

describe("a connection made with createRedis (the CLI operator's, the service's)", () => {
  it("logs an outage once, under its name, instead of waiting in silence", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString().split("\n").filter(Boolean));
        done();
      },
    });
    // Nothing listens on port 1: every connection attempt fails.
    const connection = createRedis(
      "redis://:s3cret-pw@127.0.0.1:1",
      createLogger("warn", sink),
      "operator",
      { retryStrategy: () => 50 },
    );
    try {
      const logged = await until(
        async () => lines.map((l) => JSON.parse(l) as Record<string, unknown>),
        (found) => found.length > 0,
        10_000,
      );
      // Several reconnects have happened by now; still one line for the outage.
      await new Promise((r) => setTimeout(r, 500));
      expect(lines).toHaveLength(1);
      expect(logged[0]).toMatchObject({
        redis: "operator",
        msg: "Redis connection failed; reconnecting",
      });
      expect(lines.join("")).not.toContain("s3cret");
    } finally {
      connection.disconnect();
    }
  });
});
