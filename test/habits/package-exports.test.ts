import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { ofPackage, runRecordingModules } from "../helpers/loaded-modules.js";

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

/** Imports `moneyq<subpath>` in a process of its own: its runtime names and every module it loaded. */
function importAlone(subpath: string): { names: string[]; loaded: string[] } {
  const { output, modules } = runRecordingModules(`
    const entry = await import(${JSON.stringify(specifier(subpath))});
    process.stdout.write(JSON.stringify(Object.keys(entry)));`);
  return { names: JSON.parse(output), loaded: modules };
}

/**
 * Every name (values and types) a built declaration file exports, following its re-exports.
 * Read from the text tsc emits (one export form per statement), so no compiler API is needed.
 */
function declaredNames(subpath: string): string[] {
  return [...exportedNames(join(root, pkg.exports[subpath]?.types as string))];
}

function exportedNames(file: string): Set<string> {
  const text = readFileSync(file, "utf8");
  const names = new Set<string>();
  const declared =
    /^export (?:declare )?(?:abstract )?(?:class|interface|type|function|const|let|var|enum|namespace) (\w+)/gm;
  for (const [, name] of text.matchAll(declared)) names.add(name as string);
  for (const [, list] of text.matchAll(/^export (?:type )?\{([^}]*)\}/gm))
    for (const item of (list as string).split(",")) {
      const name = item
        .replace(/^\s*type\s+/, "")
        .split(/\s+as\s+/)
        .pop()
        ?.trim();
      if (name) names.add(name);
    }
  for (const [, alias] of text.matchAll(/^export \* as (\w+) from/gm)) names.add(alias as string);
  for (const [, from] of text.matchAll(/^export \* from "([^"]+)";/gm))
    for (const name of exportedNames(
      join(dirname(file), (from as string).replace(/\.js$/, ".d.ts")),
    ))
      names.add(name);
  return names;
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
        expect(ofPackage(loaded, heavy), `${specifier(subpath)} loads ${heavy}`).toEqual([]);
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
