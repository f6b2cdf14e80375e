/** What a secret is replaced with, wherever it was found. */
export const REDACTED = "[REDACTED]";

/** JSON's two-character escapes, by the character they stand for. */
const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\\\"',
  "\\": "\\\\\\\\",
  "/": "\\\\/",
  "\b": "\\\\b",
  "\f": "\\\\f",
  "\n": "\\\\n",
  "\r": "\\\\r",
  "\t": "\\\\t",
};

/** `2b` as `[2][bB]`: a \uXXXX escape may write its hex digits in either case. */
function hexDigits(code: number, width: number): string {
  return [...code.toString(16).padStart(width, "0")]
    .map((d) => (/[a-f]/.test(d) ? `[${d}${d.toUpperCase()}]` : d))
    .join("");
}

/**
 * A pattern that finds `secret` however JSON text may write it: each character (UTF-16 code
 * unit) as itself, as a \uXXXX escape in either case, as its short escape (`\/`, `\"`, ...),
 * or, for ASCII, percent-encoded, as a URL echoed inside the text would carry it.
 */
export function secretPattern(secret: string): RegExp {
  const units: string[] = [];
  for (let i = 0; i < secret.length; i += 1) {
    const char = secret[i] as string;
    const code = secret.charCodeAt(i);
    const forms = [char.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&"), `\\\\u${hexDigits(code, 4)}`];
    const short = SHORT_ESCAPES[char];
    if (short !== undefined) forms.push(short);
    if (code < 0x80) forms.push(`%${hexDigits(code, 2)}`);
    units.push(`(?:${forms.join("|")})`);
  }
  return new RegExp(units.join(""), "g");
}

/** Removes a secret from everything a provider said: the raw text, in any encoding JSON allows. */
export class SecretRedactor {
  readonly #secret: string;
  readonly #pattern: RegExp;

  constructor(secret: string) {
    this.#secret = secret;
    this.#pattern = secretPattern(secret);
  }

  /**
   * The raw text, with every written form of the secret replaced. Every form is at least as
   * long as the secret (each character stays one or becomes an escape), so shorter text, most
   * of an answer's values and keys, is returned as it is without running the pattern.
   */
  text(text: string): string {
    if (text.length < this.#secret.length) return text;
    return text.replace(this.#pattern, REDACTED).split(this.#secret).join(REDACTED);
  }

  /** An answer header's value, redacted. */
  header(value: string | undefined): string | undefined {
    return value === undefined ? undefined : this.text(value);
  }

  /**
   * A body as stored and shown: `parsed` (what JSON.parse made of `text`) with every string and
   * key redacted, decoded, so any escape form is covered; the raw text, redacted in every form
   * JSON and URLs can write it, when the body is not JSON (`parsed` is `text` itself) or too deep
   * to walk. Redacting before parsing would break the JSON when the key occurs in its syntax.
   */
  body(text: string, parsed: unknown): unknown {
    if (parsed === text) return this.text(text);
    try {
      return this.value(parsed);
    } catch {
      return this.text(text);
    }
  }

  /**
   * A parsed value: every string in it, keys included, with the secret replaced. A part with
   * nothing to replace is returned as it is (no copy): most answers hold no secret at all.
   */
  value(value: unknown): unknown {
    if (typeof value === "string") return this.text(value);
    if (Array.isArray(value)) {
      const out = value.map((v) => this.value(v));
      return out.some((v, i) => v !== value[i]) ? out : value;
    }
    if (value !== null && typeof value === "object") return this.#object(value);
    return value;
  }

  #object(value: object): object {
    const entries = Object.entries(value);
    const redacted = entries.map(([key, v]) => [this.text(key), this.value(v)] as const);
    if (redacted.every(([key, v], i) => key === entries[i]?.[0] && v === entries[i]?.[1]))
      return value;
    const out: Record<string, unknown> = {};
    // Defined, not assigned: a key "__proto__" stays a plain key.
    for (const [key, v] of redacted)
      Object.defineProperty(out, key, {
        value: v,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    return out;
  }
}
