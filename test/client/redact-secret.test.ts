import { describe, expect, it } from "vitest";
import { REDACTED, SecretRedactor } from "../../src/client/redact-secret.js";

const SECRET = 'sk_live/Ab"9';
const redactor = new SecretRedactor(SECRET);

describe("SecretRedactor", () => {
  it.each([
    ["as itself", `key ${SECRET} end`],
    ["with \\u escapes, either case", "key \\u0073k_live\\u002fAb\\u0022\\u0039 end"],
    ["with upper-case hex", "key sk_live\\u002FAb\\u0022\\u0039 end"],
    ["with short escapes", 'key sk_live\\/Ab\\"9 end'],
    ["percent-encoded", "key sk_live%2FAb%229 end"],
  ])("replaces the secret written %s", (_, text) => {
    expect(redactor.text(text)).toBe(`key ${REDACTED} end`);
  });

  it("returns text shorter than the secret unchanged, and text of its length redacted", () => {
    expect(redactor.text(SECRET.slice(0, -1))).toBe(SECRET.slice(0, -1));
    expect(redactor.text(SECRET)).toBe(REDACTED);
  });

  it("redacts every string and key of a parsed body, however deep", () => {
    const parsed = { a: [{ [SECRET]: `x${SECRET}` }], b: "short", n: 1, t: true, z: null };
    expect(redactor.body(JSON.stringify(parsed), parsed)).toEqual({
      a: [{ [REDACTED]: `x${REDACTED}` }],
      b: "short",
      n: 1,
      t: true,
      z: null,
    });
  });

  it("keeps a key named __proto__ a plain key, and leaves a body without the secret as parsed", () => {
    const text = `{"__proto__":{"k":"${SECRET.replace('"', '\\"')}"},"a":{"b":["c"]}}`;
    const parsed = JSON.parse(text) as Record<string, unknown>;
    const redacted = redactor.body(text, parsed) as Record<string, unknown>;
    expect(Object.getPrototypeOf(redacted)).toBe(Object.prototype);
    expect(Object.hasOwn(redacted, "__proto__")).toBe(true);
    expect(JSON.stringify(redacted)).toBe(`{"__proto__":{"k":"${REDACTED}"},"a":{"b":["c"]}}`);
    expect(redacted.a).toBe(parsed.a);
  });
});
