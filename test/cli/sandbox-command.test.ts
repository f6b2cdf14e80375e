import { describe, expect, it } from "vitest";
import { runCli, spawnCli } from "../helpers/cli.js";

describe("moneyq sandbox", () => {
  it("--json prints exactly one JSON line once listening, serves it, and stops on SIGTERM", async () => {
    const child = spawnCli(["sandbox", "--port", "0", "--json"]);
    let stdout = "";
    const line = await new Promise<string>((resolve, reject) => {
      child.stdout?.on("data", (c: Buffer) => {
        stdout += c.toString();
        if (stdout.includes("\n")) resolve(stdout);
      });
      child.once("exit", (code) => reject(new Error(`exited early with ${code}`)));
    });
    const info = JSON.parse(line.trim());
    expect(Object.keys(info).sort()).toEqual(["apiKey", "baseUrl", "controlUrl"]);
    expect(info.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const res = await fetch(`${info.baseUrl}/order/my-orders`, {
      headers: { "x-api-key": info.apiKey },
    });
    expect(res.status).toBe(200);
    const health = await fetch(`${info.controlUrl}/health`);
    expect(health.status).toBe(200);

    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(stdout.trim().split("\n")).toHaveLength(1);
  });

  it("refuses a bad flag with exit code 2 and the rule", async () => {
    const result = await runCli(["sandbox", "--port", "70000"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("must be a whole number from 0 to 65535");
  });

  it("documents every flag in --help", async () => {
    const result = await runCli(["sandbox", "--help"]);
    expect(result.code).toBe(0);
    for (const flag of ["--port", "--host", "--json", "--seed", "--settle-delay-ms"])
      expect(result.stdout).toContain(flag);
  });
});
