import { describe, expect, inject, it } from "vitest";
import { FOREIGN_PROFILE_DOC, profileFile } from "../fixtures/provider-profiles.js";
import { runCli } from "../helpers/cli.js";

describe("moneyq demo with a provider profile", () => {
  it("pays the example batches through an embedded sandbox speaking the profile's dialect", async () => {
    const result = await runCli(["demo"], {
      HOME: process.env.HOME ?? "/tmp",
      REDIS_URL: inject("redisUrl"),
      MONEYQ_PROVIDER_PROFILE: profileFile(FOREIGN_PROFILE_DOC),
    });
    expect(result.code, result.stderr).toBe(0);
    // The same summary as in our own dialect (test/cli/service-commands.test.ts).
    expect(result.stdout).toMatch(
      /payout\.bank\s+240\s+234\s+6\s+0\s+0\s+0\s+completed_with_failures/,
    );
    expect(result.stdout).toMatch(
      /payout\.momo\s+120\s+117\s+3\s+0\s+0\s+0\s+completed_with_failures/,
    );
  }, 300_000);
});
