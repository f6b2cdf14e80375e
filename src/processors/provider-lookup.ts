import { PaymentsNotFoundError } from "../client/errors.js";
import type { PaymentsClient } from "../client/payments-client.js";
import type { AccountConfig } from "../config/load-config.js";
import { cutText } from "../provider/bounds.js";
import { valueAt } from "../provider/paths.js";
import { LOOKUP_OPERATIONS } from "../provider/profile.js";
import {
  listItems,
  readAnswerFields,
  readListItem,
  statusMeaning,
} from "../provider/read-answer.js";
import {
  type BalanceReading,
  type BalanceSource,
  readBalances,
} from "../provider/read-balances.js";
import type { JobEnvelope } from "../queues/job-envelope.js";
import { JOB_KINDS } from "../queues/job-kinds.js";
import type { RateGate } from "./rate-gate.js";
import { takeReadSlot } from "./read-slot.js";

/** What the provider says of a job it may have received. */
export type ProviderFinding =
  | {
      readonly state: "succeeded" | "failed";
      readonly upstreamId: string;
      readonly status: string;
      /** How it was found: by the provider's id, or by the key it echoes. */
      readonly by: "id" | "reference";
    }
  | { readonly state: "not_found"; readonly by: "id" | "reference" }
  | { readonly state: "unknown"; readonly why: string };

/** A search by reference looks this far around the job's own time. */
const AROUND_MS = 60 * 60_000;

/**
 * Looks a job up at its provider before anything is sent again (a dead letter's replay): by the
 * provider's id where moneyq has it, else in the transaction list by the key the provider echoes
 * as reference (`lists.listTransactions.reference`). Each read takes a slot of the account's
 * rate. Anything it cannot read is `unknown`: never a reason to send.
 */
export class ProviderLookups {
  readonly #clients: ReadonlyMap<string, PaymentsClient>;
  readonly #accounts: ReadonlyMap<string, AccountConfig>;
  readonly #gate: RateGate;
  readonly #toleranceMs: number;

  constructor(options: {
    readonly clients: ReadonlyMap<string, PaymentsClient>;
    readonly accounts: readonly AccountConfig[];
    readonly gate: RateGate;
    readonly toleranceMs: number;
  }) {
    this.#clients = options.clients;
    this.#accounts = new Map(options.accounts.map((a) => [a.alias, a]));
    this.#gate = options.gate;
    this.#toleranceMs = options.toleranceMs;
  }

  async find(
    envelope: JobEnvelope,
    upstreamId: string | undefined,
    around: { readonly from: number; readonly to: number },
  ): Promise<ProviderFinding> {
    const client = this.#clients.get(envelope.account);
    const lookup = JOB_KINDS[envelope.kind].lookup;
    if (client === undefined || lookup === "none")
      return { state: "unknown", why: `a ${envelope.kind} cannot be looked up` };
    try {
      if (upstreamId !== undefined) return await this.#byId(client, envelope, upstreamId);
      if (lookup === "transaction") return await this.#byReference(client, envelope, around);
      return {
        state: "unknown",
        why: "moneyq has no provider id for it, and its list echoes no key",
      };
    } catch (error) {
      if (error instanceof PaymentsNotFoundError) return { state: "not_found", by: "id" };
      return {
        state: "unknown",
        why: `the provider could not be asked: ${(error as Error).message}`,
      };
    }
  }

  async #byId(client: PaymentsClient, envelope: JobEnvelope, id: string): Promise<ProviderFinding> {
    const lookup = JOB_KINDS[envelope.kind].lookup as keyof typeof LOOKUP_OPERATIONS;
    const operation = LOOKUP_OPERATIONS[lookup];
    const params =
      lookup === "stable-transaction"
        ? {
            subAccountId: (envelope.request as { params: { subAccountId: string } }).params
              .subAccountId,
            transactionId: id,
          }
        : lookup === "order"
          ? { orderId: id }
          : { transactionId: id };
    await this.#slot(envelope.account);
    const answer = await client.send(operation, { params } as never);
    const fields = readAnswerFields(client.profile, operation, answer.data, client.adapter);
    return this.#meaning(client, id, fields.status, "id");
  }

  async #byReference(
    client: PaymentsClient,
    envelope: JobEnvelope,
    around: { readonly from: number; readonly to: number },
  ): Promise<ProviderFinding> {
    const path = client.profile.lists.listTransactions.reference;
    if (path === undefined && client.adapter?.readListItem === undefined)
      return {
        state: "unknown",
        why: "moneyq has no provider id for it, and its list echoes no key",
      };
    const query = {
      since: new Date(around.from - AROUND_MS).toISOString(),
      until: new Date(around.to + AROUND_MS).toISOString(),
    };
    await this.#slot(envelope.account);
    const answer = await client.send("listTransactions", { query } as never);
    const items = listItems(client.profile, "listTransactions", answer.data, client.adapter) ?? [];
    const item = items.find(
      (i) => path !== undefined && valueAt(i, path) === envelope.idempotencyKey,
    );
    if (item === undefined) return { state: "not_found", by: "reference" };
    const fields = readListItem(client.profile, "listTransactions", item, client.adapter);
    if (fields.id === undefined) return { state: "unknown", why: "its record has no readable id" };
    return this.#meaning(client, fields.id, fields.status, "reference");
  }

  #meaning(
    client: PaymentsClient,
    id: string,
    status: string | undefined,
    by: "id" | "reference",
  ): ProviderFinding {
    if (status === undefined) return { state: "unknown", why: "its record has no readable status" };
    const meaning = statusMeaning(client.profile, status);
    if (meaning === "succeeded" || meaning === "reversed")
      return { state: "succeeded", upstreamId: id, status, by };
    if (meaning === "failed") return { state: "failed", upstreamId: id, status, by };
    return { state: "unknown", why: `the provider says ${status}, which decides nothing yet` };
  }

  /**
   * The balances of one of the account's sub-accounts (4.15), through a slot of its rate, read
   * through the profile. Anything that stops the read is its `why`: a dry run then says "not
   * verified", never a balance.
   */
  async balances(account: string, subAccountId: string): Promise<BalanceReading> {
    const client = this.#clients.get(account);
    if (client === undefined)
      return { read: false, why: `account ${account} has no provider client` };
    try {
      await this.#slot(account);
      const answer = await client.send("getStableBalance", { params: { subAccountId } } as never);
      return readBalances(client.profile, answer.data);
    } catch (error) {
      const why = `the provider could not be asked: ${cutText((error as Error).message)}`;
      return { read: false, why };
    }
  }

  /** A slot of the account's rate (the lookup lane); a pause or a late slot is no answer yet. */
  async #slot(account: string): Promise<void> {
    const config = this.#accounts.get(account);
    if (config === undefined) throw new Error(`account ${account} is not configured`);
    const slot = await takeReadSlot(this.#gate, {
      account,
      perSecond: config.ratePerSecond,
      lane: "lookup",
      toleranceMs: this.#toleranceMs,
    });
    if (!slot.send) throw new Error("the account is paused or its rate gate is busy: try again");
  }
}

/** The lookups' balance reads, as a dry run's funds check takes them. */
export function balanceSource(lookups: ProviderLookups): BalanceSource {
  return (account, subAccountId) => lookups.balances(account, subAccountId);
}
