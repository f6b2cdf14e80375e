import { Writable } from "node:stream";
import { describe, expect, it, vi } from "vitest";
import { createLogger } from "../../src/logger.js";
import { type ErrorCount, RepeatedErrors } from "../../src/redis/repeated-errors.js";

const OOM =
  "OOM command not allowed when used memory > 'maxmemory'. script: 6c4c6d, on @user_script:215.";

function logged() {
  const lines: { level: number; msg: string; repeats?: number; code?: string }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString().split("\n"))
        if (text.trim()) lines.push(JSON.parse(text));
      done();
    },
  });
  return { lines, logger: createLogger("info", sink) };
}

describe("a run of the same error", () => {
  it("is logged once, then once per interval with its count; every one is counted", () => {
    const { lines, logger } = logged();
    const counts: ErrorCount[] = [];
    // The interval's clock is the test's: a slow loop of reports cannot skip a summary.
    vi.useFakeTimers();
    const errors = new RepeatedErrors(logger, { intervalMs: 200, count: (c) => counts.push(c) });
    const pause = (ms: number) => vi.advanceTimersByTime(ms);
    try {
      for (let i = 0; i < 1_000; i += 1)
        errors.report("worker", "worker error", new Error(OOM), { account: "acme" });
      errors.report("worker", "worker error", new Error("could not renew lock for job j_1"));
      errors.report("worker", "worker error", new Error("could not renew lock for job j_2"));
      expect(lines.map((l) => [l.msg, l.code])).toEqual([
        ["worker error", "redis_out_of_memory"],
        ["worker error", "other"],
      ]);
      pause(300);
      expect(lines.slice(2).map((l) => [l.msg, l.repeats])).toEqual([
        ["worker error (repeated 999 times in 0.2 s)", 999],
        ["worker error (repeated 1 times in 0.2 s)", 1],
      ]);
      // Still going: one line per interval.
      for (let i = 0; i < 50; i += 1) errors.report("worker", "worker error", new Error(OOM));
      pause(250);
      expect(lines.slice(4).map((l) => l.repeats)).toEqual([50]);
      // Over: the next one is logged at once.
      pause(250);
      errors.report("worker", "worker error", new Error(OOM));
      expect(lines.at(-1)).toMatchObject({ msg: "worker error", code: "redis_out_of_memory" });
      expect(counts).toHaveLength(1_053);
      expect(counts[0]).toEqual({ source: "worker", code: "redis_out_of_memory" });
      expect(counts[1_000]).toEqual({ source: "worker", code: "other" });
    } finally {
      errors.close();
      vi.useRealTimers();
    }
  });

  it("is told apart by source and message; close sums up what is left", () => {
    const { lines, logger } = logged();
    const errors = new RepeatedErrors(logger, { intervalMs: 60_000 });
    errors.report("worker", "worker error", new Error(OOM));
    errors.report("api", "API request failed", new Error(OOM));
    errors.report("api", "API request failed", new Error(OOM));
    errors.close();
    expect(lines.map((l) => l.msg)).toEqual([
      "worker error",
      "API request failed",
      "API request failed (repeated 1 times in 60 s)",
    ]);
    errors.close();
    expect(lines).toHaveLength(3);
  });
});
