import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ofPackage, runRecordingModules } from "../helpers/loaded-modules.js";

const root = join(import.meta.dirname, "..", "..");

describe("the moneyq command", () => {
  it("builds its commands without loading the service's dependencies", () => {
    // In a process of its own: this test process has loaded them all already.
    const { modules } = runRecordingModules(`
      const { buildProgram } = await import(${JSON.stringify(join(root, "dist/cli/program.js"))});
      buildProgram();`);
    expect(ofPackage(modules, "commander").length).toBeGreaterThan(0);
    for (const heavy of ["bullmq", "ioredis", "fastify", "undici", "prom-client", "pino"])
      expect(ofPackage(modules, heavy), heavy).toEqual([]);
  });
});
