import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  name: string;
  exports: Record<string, { types: string; default: string }>;
};

/** What a subpath must offer; the package's own entries, resolved by its name as a user would. */
const EXPECTED: Record<string, readonly string[]> = {
  ".": [
    "Producer",
    "EnqueueValidationError",
    "PaymentsClient",
    "PaymentsError",
    "ResultsStore",
    "verifyWebhook",
    "loadConfig",
    "createRedis",
    "startService",
    "closeOnSignals",
  ],
  "./client": ["PaymentsClient", "PaymentsError", "PaymentsRateLimitError", "shouldRetry"],
  "./producer": [
    "Producer",
    "EnqueueValidationError",
    "IdempotencyKeyReusedError",
    "deriveIdempotencyKey",
    "JOB_KINDS",
  ],
  "./provider": ["parseProviderProfile", "DEFAULT_PROVIDER_PROFILE"],
  "./sandbox": ["startSandbox", "SandboxControl", "DEMO_API_KEY"],
};

/** Packages a subpath imported alone must not load (the sandbox's server, the service's Redis). */
const NOT_LOADED: Record<string, readonly string[]> = {
  "./client": ["bullmq", "ioredis", "fastify", "pino", "prom-client"],
  "./producer": ["fastify", "undici", "pino", "prom-client"],
  "./provider": ["bullmq", "ioredis", "fastify", "undici", "pino", "prom-client"],
};

const specifier = (subpath: string) => `${pkg.name}${subpath.slice(1)}`;

/** Imports `moneyq<subpath>` in a process of its own: its runtime names and the CJS packages it loaded. */
function importAlone(subpath: string): { names: string[]; loaded: string[] } {
  const script = `
    import { createRequire } from "node:module";
    const entry = await import(${JSON.stringify(specifier(subpath))});
    const loaded = Object.keys(createRequire(import.meta.url).cache);
    process.stdout.write(JSON.stringify({ names: Object.keys(entry), loaded }));`;
  return JSON.parse(
    execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: root,
      encoding: "utf8",
    }),
  );
}

/** Every name (values and types) a built declaration file exports. */
function declaredNames(subpath: string): string[] {
  const file = join(root, pkg.exports[subpath]?.types as string);
  const program = ts.createProgram([file], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(file) as ts.SourceFile);
  return checker.getExportsOfModule(module as ts.Symbol).map((s) => s.name);
}

describe("the package's entries", () => {
  it("offers the main entry and the client, producer and sandbox subpaths, each with its types", () => {
    for (const subpath of Object.keys(EXPECTED)) {
      const entry = pkg.exports[subpath];
      expect(entry, subpath).toBeDefined();
      expect(existsSync(join(root, entry?.types as string)), `${subpath} types`).toBe(true);
      expect(existsSync(join(root, entry?.default as string)), `${subpath} code`).toBe(true);
    }
  });

  for (const [subpath, names] of Object.entries(EXPECTED))
    it(`resolves ${specifier(subpath)} by the package's name and finds what it offers`, () => {
      const { names: exported, loaded } = importAlone(subpath);
      for (const name of names) expect(exported, `${specifier(subpath)}: ${name}`).toContain(name);
      for (const heavy of NOT_LOADED[subpath] ?? [])
        expect(
          loaded.filter((p) => p.includes(`/node_modules/${heavy}/`)),
          `${specifier(subpath)} loads ${heavy}`,
        ).toEqual([]);
    });

  it("keeps the main entry a chosen list of at most 90 names, types included", () => {
    const names = declaredNames(".");
    expect(names).toContain("JobInput");
    expect(names.length).toBeLessThanOrEqual(90);
  });

  it("offers every name the README and docs/ import from the package", () => {
    const docs = [
      join(root, "README.md"),
      ...readdirSync(join(root, "docs"))
        .filter((f) => f.endsWith(".md"))
        .map((f) => join(root, "docs", f)),
    ];
    const imports = /import\s*(?:type\s*)?\{([^}]*)\}\s*from\s*"(moneyq(?:\/[a-z]+)?)"/g;
    const checked: string[] = [];
    for (const doc of docs)
      for (const [, list, from] of readFileSync(doc, "utf8").matchAll(imports)) {
        const subpath = `.${(from as string).slice(pkg.name.length)}`;
        expect(pkg.exports[subpath], `${doc}: ${from}`).toBeDefined();
        const offered = declaredNames(subpath);
        for (const name of (list as string).split(",").map((n) => n.replace(/^type\s+/, "").trim()))
          if (name) {
            expect(offered, `${doc}: ${name} from ${from}`).toContain(name);
            checked.push(name);
          }
      }
    expect(checked.length).toBeGreaterThan(0);
  });
});
