import { JOB_FIELDS, priorityScoreRange } from "../bullmq-internals.js";
import { SENT_FIELD } from "../keys.js";

/**
 * The values the scripts share with the code that calls them, named once here (or taken from
 * the module that holds them) and handed to each script that names one as a `local` of the same
 * name (script.ts, `assemble`). A list is a set in Lua (`LIST[value] == true`); a record is a
 * table of its fields.
 */

/** What RESERVE_SLOTS answers for a request, decoded in processors/rate-gate.ts. */
export const RESERVE_STATUS = Object.freeze({
  /** Retry in (value) ms. */
  RETRY: 0,
  /** A slot was reserved (value: its delay). */
  RESERVED: 1,
  /** Its batch, or the job itself, was cancelled. */
  CANCELLED: 2,
  /** The account is paused (value: ms). */
  PAUSED: 3,
  /** An operator paused the account. */
  OPERATOR_HELD: 4,
  /** The job's lock is no longer this worker's. */
  LOCK_LOST: 5,
  /** Hand the job back: another lane has its turn. */
  YIELD: 6,
  /** A kind without an idempotency key was sent before. */
  ALREADY_SENT: 7,
  /** Held by its batch or its own hold (value: ms, or 0 until it is approved). */
  BATCH_HELD: 8,
  /** Held by a velocity limit (value: ms until the window makes room). */
  VELOCITY_HELD: 9,
  /** Held by its currency's insufficient funds hold (value: ms left, or 0 until resumed). */
  FUNDS_HELD: 10,
});

/** For VELOCITY_HELD, the kind of limit that began the currency's velocity hold (0: none). */
export const VELOCITY_HOLD_BEGUN = Object.freeze({ CURRENCY: 1, BENEFICIARY: 2 });

/** What CLEAR_SLOTS answers for a request, decoded in processors/rate-gate.ts. */
export const CLEAR_STATUS = Object.freeze({
  /** Clear to leave (and recorded as sent); value: the ms the job's lock has left, -1 for none. */
  CLEAR: 1,
  /** The account is paused (value: ms). */
  PAUSED: 3,
  /** An operator paused the account. */
  OPERATOR_HELD: 4,
  /** The job's lock is no longer this worker's. */
  LOCK_LOST: 5,
  /** Its slot began too long ago. */
  LATE: 8,
  /** A lookup or urgent request took its bulk slot. */
  TAKEN: 9,
});

/** The states in which a batch can still be cancelled: its jobs may not all have been sent. */
export const CANCELLABLE_BATCH_STATES = Object.freeze([
  "validating",
  "awaiting_approval",
  "scheduled",
  "queued",
  "running",
] as const);

/**
 * How long past its `sealBy` a job of an unsealed batch is held: by then its batch is sealed,
 * resumed (a later `sealBy`) or, abandoned, cancelled by the sweep.
 */
export const SEAL_HOLD_MARGIN_MS = 1_000;

/** The bulk lane's BullMQ priority (LANE_PRIORITY in queues/lanes.ts, above this layer). */
const BULK_PRIORITY = 3;

export type LuaConstant =
  | number
  | string
  | readonly string[]
  | Readonly<Record<string, number | string>>;

/** Every constant a script may name, by the name it uses. */
export const LUA_CONSTANTS: Readonly<Record<string, LuaConstant>> = Object.freeze({
  RESERVE_STATUS,
  VELOCITY_HOLD_BEGUN,
  CLEAR_STATUS,
  CANCELLABLE_BATCH_STATES,
  SEAL_HOLD_MARGIN_MS,
  SENT_FIELD,
  JOB_DATA_FIELD: JOB_FIELDS.data,
  JOB_PRIORITY_FIELD: JOB_FIELDS.priority,
  BULK_PRIORITY,
  /** The lowest score of a bulk job in BullMQ's prioritized set. */
  BULK_SCORE_MIN: priorityScoreRange(BULK_PRIORITY)[0],
});
