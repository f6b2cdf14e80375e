import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");

describe("the moneyq command", () => {
  it("builds its commands without loading the service's dependencies", () => {
    // In a process of its own: this test process has loaded them all already.
    const script = `
      import { createRequire } from "node:module";
      const { buildProgram } = await import(${JSON.stringify(join(root, "dist/cli/program.js"))});
      buildProgram();
      process.stdout.write(JSON.stringify(Object.keys(createRequire(import.meta.url).cache)));`;
    const loaded: string[] = JSON.parse(
      execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" }),
    );
    expect(loaded.some((p) => p.includes("/node_modules/commander/"))).toBe(true);
    for (const heavy of ["bullmq", "ioredis", "fastify", "undici", "prom-client", "pino"])
      expect(
        loaded.filter((p) => p.includes(`/node_modules/${heavy}/`)),
        heavy,
      ).toEqual([]);
  });
});
