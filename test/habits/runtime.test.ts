import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  engines: { node: string };
  devDependencies: Record<string, string>;
};
const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8");

// Node 24 LTS is the runtime: the tests run on the Node the project pins (npm scripts put
// node_modules/.bin first on PATH), whatever the system's Node is, and the image is built on it.
describe("the runtime", () => {
  it("is the Node the project pins, version for version", () => {
    expect(pkg.devDependencies.node).toMatch(/^24\.\d+\.\d+$/);
    expect(process.version).toBe(`v${pkg.devDependencies.node}`);
  });

  it("is the major the engines field and the Docker image's base name", () => {
    expect(pkg.engines.node).toMatch(/^>=24\./);
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24-/m);
  });
});
