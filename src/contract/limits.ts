/** Spec section 8, exactly as written. Every schema reads its limits from here. */
export const LIMITS = Object.freeze({
  amountMax: 1_000_000_000,
  accountNumberMax: 10,
  accountNameMax: 100,
  bankNameMax: 200,
  narrationMax: 100,
  momoPhoneMin: 10,
  momoPhoneMax: 14,
  fundWalletPhoneMin: 8,
  fundWalletPhoneMax: 14,
  iso2Length: 2,
  rateIso2Length: 4,
  pageMin: 1,
  pageSizeMin: 1,
  pageSizeMax: 100,
  /** Decisions, not spec: see docs/contract-decisions.md. */
  fiatDecimals: 2,
  /** The smallest fiat amount: one cent. */
  fiatMin: 0.01,
  /** The most significant digits a double holds exactly (an amount with more is refused). */
  significantDigitsMax: 15,
  /** Free-form objects (metadata, buyer payment details): nesting and size as JSON. */
  freeFormDepthMax: 16,
  freeFormBytesMax: 16 * 1024,
  stableDecimals: 6,
});

/** Spec 4.4. */
export const STABLE_AMOUNT_PATTERN = /^\d+(\.\d+)?$/;
/** Spec 4.4. */
export const TO_ADDRESS_PATTERN = /^T[1-9A-HJ-NP-Za-km-z]{33}$/;
