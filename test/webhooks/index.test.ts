import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import * as webhooks from "../../src/webhooks/index.js";
import { signWebhook } from "../../src/webhooks/moneyq-signature.js";

/** Every module `file` loads, following its relative imports: the bare ones it reaches. */
function bareImports(file: string, seen = new Set<string>()): Set<string> {
  const bare = new Set<string>();
  if (seen.has(file)) return bare;
  seen.add(file);
  const text = readFileSync(file, "utf8");
  for (const [, spec] of text.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)) {
    if (spec === undefined) continue;
    if (!spec.startsWith(".")) bare.add(spec);
    else
      for (const b of bareImports(resolve(dirname(file), spec.replace(/\.js$/, ".ts")), seen))
        bare.add(b);
  }
  return bare;
}

describe("moneyq/webhooks", () => {
  it("loads nothing beyond Node's own modules", () => {
    const entry = resolve(import.meta.dirname, "../../src/webhooks/index.ts");
    const loaded = [...bareImports(entry)];
    expect(loaded.length).toBeGreaterThan(0);
    expect(loaded.filter((spec) => !spec.startsWith("node:"))).toEqual([]);
  });

  it("verifies a delivery signed by moneyq", () => {
    const secret = "a-webhook-secret-of-some-length";
    const body = '{"jobId":"j_1"}';
    const header = signWebhook(secret, body);
    expect(webhooks.verifyWebhook(secret, header, body)).toBe(true);
    expect(webhooks.verifyWebhook(secret, header, `${body} `)).toBe(false);
    expect(webhooks.SIGNATURE_HEADER).toBe("moneyq-signature");
  });
});
