import { describe, expect, it } from "vitest";
import { RedisClock } from "../../src/redis/redis-clock.js";

// Redis's clock stands OFFSET ms ahead of the local one in these samples.
const OFFSET = 1_700_000_000_000;

describe("RedisClock", () => {
  it("knows nothing before a call", () => {
    const clock = new RedisClock();
    expect(clock.roundTripMs()).toBe(0);
    expect(clock.localOf(OFFSET + 5)).toBeUndefined();
  });

  it("maps Redis's time through the fastest answer: never before it, late by that answer's travel", () => {
    const clock = new RedisClock();
    // Calls whose script ran 2 ms after they left, answered 25 ms later; one answer came late.
    clock.sample(100, OFFSET + 102, 127);
    clock.sample(200, OFFSET + 202, 260);
    clock.sample(300, OFFSET + 302, 327);
    expect(clock.roundTripMs()).toBe(27);
    // Redis's time OFFSET + 500 is local 500; seen through the fastest answer, 25 ms later.
    expect(clock.localOf(OFFSET + 500)).toBe(525);
  });

  it("takes the best of each measure, from different calls", () => {
    const clock = new RedisClock();
    // A call slow on its way out (its script ran late), then one slow on its way back.
    clock.sample(100, OFFSET + 130, 131);
    clock.sample(200, OFFSET + 201, 230);
    expect(clock.roundTripMs()).toBe(30);
    expect(clock.localOf(OFFSET + 500)).toBe(501);
  });

  it("forgets what it measured more than ten seconds ago", () => {
    const clock = new RedisClock();
    clock.sample(100, OFFSET + 100, 101);
    // Redis's clock stepped back 50 ms, and Redis is now 20 ms away: the first call still counts.
    clock.sample(5_000, OFFSET - 50 + 5_000, 5_020);
    expect(clock.roundTripMs()).toBe(1);
    expect(clock.localOf(OFFSET + 6_000)).toBe(6_001);
    clock.sample(11_500, OFFSET - 50 + 11_500, 11_520);
    expect(clock.roundTripMs()).toBe(20);
    expect(clock.localOf(OFFSET - 50 + 12_000)).toBe(12_020);
  });
});
