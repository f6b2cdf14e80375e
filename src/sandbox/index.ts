export type {
  BooksChange,
  ExternalDebit,
  ReverseRequest,
  TransactionEdit,
} from "./books-edits.js";
export type { BooksEdit, TransactionFacts } from "./edit-log.js";
export type { FaultSettings, FaultSettingsInput } from "./faults.js";
export { type ForcedOutcome, MAGIC_AMOUNTS, MAGIC_DESTINATIONS } from "./magic-values.js";
export {
  DEMO_ACCOUNT_ID,
  DEMO_API_KEY,
  REVERSAL_STYLES,
  type ReversalStyle,
  SANDBOX_DEFAULTS,
  type SandboxAccountSeed,
  type SandboxOptions,
  SEED_BALANCES,
} from "./options.js";
export { UNITS_PER_USD } from "./rates.js";
export { SandboxControl } from "./sandbox-control.js";
export { NETWORK_FEES } from "./stable-operations.js";
export { type RunningSandbox, SANDBOX_BASE_PATH, startSandbox } from "./start-sandbox.js";
