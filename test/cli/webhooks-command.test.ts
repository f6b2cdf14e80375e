import { describe, expect, it } from "vitest";
import { WebhookDeliveries } from "../../src/webhooks/webhook-deliveries.js";
import { runCli } from "../helpers/cli.js";
import { failedDeliveries } from "../helpers/failed-deliveries.js";
import { useService } from "../helpers/service.js";

const h = useService();
const cli = (args: string[]) => runCli(args, h.env());

describe("moneyq webhooks", { timeout: 60_000 }, () => {
  it("lists failed deliveries of every account and sends them again", async () => {
    const ids = await failedDeliveries(h.redis(), h.config().redisPrefix, ["alpha", "beta"]);
    const list = await cli(["webhooks", "failed", "--json"]);
    expect(list.code).toBe(0);
    const listed = list.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(listed.map((d) => d.eventId).sort()).toEqual([...ids].sort());
    const sent = await cli(["webhooks", "redeliver", ...ids, "1-1"]);
    expect(sent.code).not.toBe(0);
    expect(sent.stdout).toBe(ids.map((id) => `${id} redelivered\n`).join(""));
    expect(sent.stderr).toContain("1-1: no such delivery");
    const empty = await cli(["webhooks", "failed"]);
    expect(empty.stderr).toContain("0 failed deliveries");
  });

  it("tells and resumes a stop after 410 Gone", async () => {
    const deliveries = new WebhookDeliveries(h.redis(), h.config().redisPrefix);
    try {
      await deliveries.stop("https://hooks.example.test/gone", Date.parse("2026-11-01T10:00:00Z"));
      expect((await cli(["webhooks", "status"])).stdout).toBe(
        "stopped since 2026-11-01T10:00:00.000Z (410 Gone)\n",
      );
      const resumed = await cli(["webhooks", "resume"]);
      expect(resumed.code).toBe(0);
      expect((await cli(["webhooks", "status"])).stdout).toBe("delivering\n");
      expect(await deliveries.queue.isPaused()).toBe(false);
    } finally {
      await deliveries.close();
    }
  });
});
