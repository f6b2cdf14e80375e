// Rules several parts of the configuration share: patterns kept word for word, keys, aliases, amounts.
import { z } from "zod";

/** A string rule whose message is kept word for word (a refinement, not a bare pattern). */
export function matching(pattern: RegExp, message: string) {
  return z.string().refine((v) => pattern.test(v), { message });
}

// The spec sets no format for a key: anything every HTTP stack carries unchanged in a header as
// one token. A provider profile's apiKeyPattern can narrow it further, never widen it.
export const API_KEY_RULE = "must be visible ASCII characters (0x21 to 0x7E), with no spaces";

export const apiKey = matching(/^[\x21-\x7e]+$/, API_KEY_RULE);

export const positiveInt = matching(/^[1-9]\d*$/, "must be a positive whole number");

export const wholeNumber = matching(/^\d+$/, "must be a whole number");

export const flag = z.string().refine((v) => ["0", "1", "true", "false"].includes(v), {
  message: "must be 1, 0, true or false",
});

export const alias = matching(
  /^[a-z][a-z0-9_-]{0,31}$/,
  "must be 1 to 32 lowercase letters, digits, '-' or '_', starting with a letter",
);

/** Amounts as decimal text by currency code: an approval policy's thresholds. */
export const currencyCode = matching(
  /^[A-Z]{3,10}$/,
  "must be a currency code (3 to 10 capital letters)",
);

export const decimalAmount = matching(
  /^\d{1,15}(\.\d{1,8})?$/,
  'must be an amount as decimal text, such as "10000.00"',
);

export const amountsByCurrency = z.record(currencyCode, decimalAmount);
