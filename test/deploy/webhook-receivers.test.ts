import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { standardHeaders } from "../../src/webhooks/standard-signature.js";

const root = join(import.meta.dirname, "..", "..");
const SECRET = `whsec_${Buffer.alloc(32, 3).toString("base64")}`;
const PLAIN = "a_plain_secret_of_some_length";
const BODY = '{"jobId":"j_1","account":"alpha","result":"succeeded"}';

/** The Python receiver each document shows, run as written by the machine's python3. */
function pythonOf(file: string): string {
  const text = readFileSync(join(root, file), "utf8");
  const block = /```python\n([\s\S]*?)```/.exec(text)?.[1];
  if (block === undefined) throw new Error(`${file} shows no Python receiver`);
  return block;
}

function pythonVerifies(
  file: string,
  secret: string,
  headers: Record<string, string>,
  body: string,
) {
  const harness = `${pythonOf(file)}
import json, sys
given = json.load(sys.stdin)
print(verify(given["secret"], given["headers"], given["body"].encode()))
`;
  const run = spawnSync("python3", ["-c", harness], {
    input: JSON.stringify({ secret, headers, body }),
    encoding: "utf8",
  });
  expect(run.stderr, file).toBe("");
  return run.stdout.trim() === "True";
}

describe("the documented webhook receivers in another language", () => {
  // The README points to library.md's receiver rather than showing one.
  for (const file of ["docs/library.md"]) {
    it(`${file}: Python accepts what moneyq signs, under each secret, and nothing else`, () => {
      const headers = standardHeaders([SECRET, PLAIN], "1800000000000-0", BODY);
      expect(pythonVerifies(file, SECRET, headers, BODY)).toBe(true);
      expect(pythonVerifies(file, PLAIN, headers, BODY)).toBe(true);
      const stranger = `whsec_${Buffer.alloc(32, 4).toString("base64")}`;
      expect(pythonVerifies(file, stranger, headers, BODY)).toBe(false);
      expect(
        pythonVerifies(file, SECRET, { ...headers, "webhook-id": "1800000000000-1" }, BODY),
      ).toBe(false);
      expect(pythonVerifies(file, SECRET, headers, BODY.replace("alpha", "beta"))).toBe(false);
      const old = standardHeaders(
        [SECRET],
        "1800000000000-0",
        BODY,
        Math.floor(Date.now() / 1000) - 600,
      );
      expect(pythonVerifies(file, SECRET, old, BODY)).toBe(false);
    });
  }
});
