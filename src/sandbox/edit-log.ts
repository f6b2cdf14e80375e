import type { Currency } from "../contract/enums.js";
import { NumberedLog, type Unnumbered } from "./numbered-log.js";
import type { ReversalStyle } from "./options.js";

/** What a fiat transaction says, before and after a hand edit. */
export interface TransactionFacts {
  readonly status: string;
  readonly amount: number;
  readonly currency: Currency;
  readonly createdAt: string;
  readonly hidden: boolean;
}

/** One change to the provider's books made through the control API, never by a /v1 request. */
export type BooksEdit = {
  readonly seq: number;
  /** Sandbox clock, ISO 8601. */
  readonly at: string;
  readonly accountId: string;
  readonly transactionId: string;
} & (
  | {
      /** A hand edit of status, amount, currency or visibility. */
      readonly action: "edit";
      readonly before: TransactionFacts;
      readonly after: TransactionFacts;
    }
  | {
      /** A DEBIT another system made on the account, or a top-up paid into it (a CREDIT). */
      readonly action: "external_debit" | "top_up";
      readonly after: TransactionFacts;
    }
  | {
      /** A reversal asked for, to come due later. */
      readonly action: "reversal_scheduled";
      readonly as: ReversalStyle;
      readonly dueAt: string;
    }
  | {
      /** A reversal asked for, done: at once, or when it came due. */
      readonly action: "reversed";
      readonly as: ReversalStyle;
      /** The reversing transaction (`as: "transaction"`). */
      readonly reversalId?: string;
    }
  | {
      /** A reversal asked for that came due when the transaction could no longer be reversed. */
      readonly action: "reversal_skipped";
      readonly as: ReversalStyle;
      readonly reason: string;
    }
);

/** Every control change to the books, in order, the last `capacity` kept (GET /__sandbox/edits). */
export class EditLog extends NumberedLog<BooksEdit> {
  record(entry: Unnumbered<BooksEdit>): BooksEdit {
    return this.append(entry);
  }
}
