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

  /** The raw text, with every written form of the secret replaced. */
  text(text: string): string {
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

  /** A parsed value: every string in it, keys included, with the secret replaced. */
  value(value: unknown): unknown {
    if (typeof value === "string") return this.text(value);
    if (Array.isArray(value)) return value.map((v) => this.value(v));
    if (value !== null && typeof value === "object") {
      const out: Record<string, unknown> = {};
      for (const [key, v] of Object.entries(value)) {
        Object.defineProperty(out, this.text(key), {
          value: this.value(v),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    return value;
  }
}
