import { luaScript } from "./script.js";

/** Every Lua script of this folder, by the command name it is defined as (script.ts). */
export const ABANDON_SUBMISSION = luaScript("moneyqAbandonSubmission", "abandon-submission.lua");
export const BATCH_QUEUED = luaScript("moneyqBatchQueued", "batch-queued.lua");
export const BEGIN_BATCH_SUBMIT = luaScript("moneyqBeginSubmit", "begin-batch-submit.lua");
export const CANCEL_BATCH = luaScript("moneyqCancelBatch", "cancel-batch.lua");
export const CLAIM_BATCH_REFERENCES = luaScript(
  "moneyqClaimReferences",
  "claim-batch-references.lua",
);
export const CLAIM_FINGERPRINTS = luaScript("moneyqClaimFingerprints", "claim-fingerprints.lua");
export const CLAIM_RECHECKS = luaScript("moneyqClaimRechecks", "claim-rechecks.lua");
export const CLAIM_TURNS = luaScript("moneyqClaimTurns", "claim-turns.lua");
export const CLEAR_SLOTS = luaScript("moneyqClearSlots", "clear-slots.lua");
export const DECIDE_HELD_WORK = luaScript("moneyqDecideHeldWork", "decide-held-work.lua");
export const DELETE_IF_HELD = luaScript("moneyqDeleteIfHeld", "delete-if-held.lua");
export const EMIT_RESULTS = luaScript("moneyqEmitResults", "emit-results.lua");
export const END_LANE_HOLD = luaScript("moneyqEndLaneHold", "end-lane-hold.lua");
export const FORGET_RESULT = luaScript("moneyqForgetResult", "forget-result.lua");
export const HOLD_LANE = luaScript("moneyqHoldLane", "hold-lane.lua");
export const MARK_AND_COUNT_REPLICAS = luaScript(
  "moneyqMarkAndCountReplicas",
  "mark-and-count-replicas.lua",
);
export const MOVE_LEGACY_BATCH = luaScript("moneyqMoveLegacyBatch", "move-legacy-batch.lua");
export const PAUSE_ACCOUNT = luaScript("moneyqPauseAccount", "pause-account.lua");
export const RECORD_PAYMENT_REPEATS = luaScript(
  "moneyqRecordPaymentRepeats",
  "record-payment-repeats.lua",
);
export const RECORD_RESOLUTION = luaScript("moneyqRecordResolution", "record-resolution.lua");
export const RECORD_REVERSAL = luaScript("moneyqRecordReversal", "record-reversal.lua");
export const RELEASE_FINGERPRINTS = luaScript(
  "moneyqReleaseFingerprints",
  "release-fingerprints.lua",
);
export const RELEASE_TURN = luaScript("moneyqReleaseTurn", "release-turn.lua");
export const RENEW_LEASE = luaScript("moneyqRenewLease", "renew-lease.lua");
export const RESERVE_SLOTS = luaScript("moneyqReserveSlots", "reserve-slots.lua");
export const SET_BATCH_ROWS = luaScript("moneyqSetRows", "set-batch-rows.lua");
export const WRITE_JOB_DATA = luaScript("moneyqWriteJobData", "write-job-data.lua");
