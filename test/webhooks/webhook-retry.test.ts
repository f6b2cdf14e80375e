import { describe, expect, it } from "vitest";
import {
  MAX_RETRY_AFTER_MS,
  MIN_RETRY_AFTER_MS,
  retryWait,
  WEBHOOK_RETRY_SCHEDULE_MS,
} from "../../src/webhooks/webhook-retry.js";

const HOUR = 3_600_000;
const schedule = WEBHOOK_RETRY_SCHEDULE_MS;
const middle = () => 0.5;

describe("the webhook retry waits", () => {
  it("add up to about three days over ten attempts", () => {
    expect(schedule).toHaveLength(9);
    const total = schedule.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(70 * HOUR);
    expect(total).toBeLessThan(74 * HOUR);
    expect(schedule.map((_, i) => retryWait(i + 1, undefined, schedule, middle))).toEqual(schedule);
  });

  it.each([
    [0, 0.9],
    [0.5, 1],
    [1, 1.1],
  ])("are jittered by ±10%%: random %s gives %s of the wait", (random, share) => {
    for (let attempt = 1; attempt <= schedule.length; attempt += 1)
      expect(retryWait(attempt, undefined, schedule, () => random)).toBe(
        Math.round((schedule[attempt - 1] as number) * share),
      );
  });

  it("wait the last wait again for attempts beyond the schedule (earlier releases queued 12)", () => {
    for (const attempt of [10, 11, 12])
      expect(retryWait(attempt, undefined, schedule, middle)).toBe(schedule.at(-1));
  });

  it.each([
    [2_000, 2_000],
    [0, MIN_RETRY_AFTER_MS],
    [10 * 24 * HOUR, MAX_RETRY_AFTER_MS],
  ])("take a Retry-After of %s ms as %s ms, whatever the schedule says", (given, wait) => {
    expect(retryWait(1, given, schedule, () => 1)).toBe(wait);
    expect(retryWait(9, given, schedule, () => 0)).toBe(wait);
  });
});
