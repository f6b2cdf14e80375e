import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SHUTDOWN_BOUND_MS } from "../../src/service/start-service.js";
import { exitOf } from "../helpers/cli.js";

const root = join(import.meta.dirname, "../..");

/**
 * A library caller that leaves the grace period out: the bound comes from the service (here
 * 200 ms), not from the 10 s default. Its close never ends, so only the bound ends the process.
 */
const SCRIPT = `
import { closeOnSignals } from "./dist/service/start-service.js";
import { createLogger } from "./dist/logger.js";
closeOnSignals({ shutdownGraceMs: 200, close: () => new Promise(() => {}) }, createLogger("silent"));
process.stdout.write("ready\\n");
setInterval(() => {}, 1000);
`;

describe("closeOnSignals without a grace period argument", () => {
  it("bounds the stop by the service's own grace period", async () => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", SCRIPT], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
    });
    await new Promise<void>((resolve) => child.stdout?.once("data", () => resolve()));
    const asked = Date.now();
    child.kill("SIGTERM");
    expect(await exitOf(child)).toBe(1);
    // 200 ms + the bound; the 10 s default would take 15 s.
    expect(Date.now() - asked).toBeLessThan(200 + SHUTDOWN_BOUND_MS + 3_000);
  }, 30_000);
});
