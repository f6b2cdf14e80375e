import { SandboxError } from "./sandbox-error.js";

/** One movement on one balance. Amounts are integers in the balance's minor unit. */
export interface LedgerEntry {
  readonly entryId: number;
  readonly accountId: string;
  /** `wallet:<id>:available`, `wallet:<id>:held`, `stable:<sub>:<cur>:<net>:available`, ... */
  readonly balance: string;
  readonly delta: number;
  /** The transaction or order the movement belongs to ("opening" for seeded balances). */
  readonly transactionId: string;
  /** The resource the request created; with the key, it shows one effect per key. */
  readonly effectId: string | null;
  readonly idempotencyKey: string | null;
  readonly memo: string;
  readonly at: string;
}

export interface Posting {
  readonly balance: string;
  readonly delta: number;
}

export interface PostingRef {
  readonly accountId: string;
  readonly transactionId: string;
  readonly effectId: string | null;
  readonly idempotencyKey: string | null;
  readonly memo: string;
  readonly at: string;
}

/** Double-checked bookkeeping: every balance is the running sum of its entries. */
export class Ledger {
  readonly #entries: LedgerEntry[] = [];
  readonly #balances = new Map<string, number>();

  balance(name: string): number {
    return this.#balances.get(name) ?? 0;
  }

  /**
   * Applies all postings or none. A posting that would make a balance negative is refused
   * with insufficient_funds, naming the balance's owner field.
   */
  post(postings: readonly Posting[], ref: PostingRef): void {
    const next = new Map<string, number>();
    for (const p of postings) {
      if (!Number.isInteger(p.delta)) throw new Error(`ledger: non-integer delta on ${p.balance}`);
      next.set(p.balance, (next.get(p.balance) ?? this.balance(p.balance)) + p.delta);
    }
    for (const [, value] of next) {
      if (value < 0) {
        throw new SandboxError(400, "insufficient_funds", "insufficient balance for this amount");
      }
    }
    for (const p of postings) {
      if (p.delta === 0) continue;
      this.#entries.push({
        entryId: this.#entries.length + 1,
        balance: p.balance,
        delta: p.delta,
        ...ref,
      });
    }
    for (const [name, value] of next) this.#balances.set(name, value);
  }

  entries(accountId?: string): readonly LedgerEntry[] {
    return accountId === undefined
      ? this.#entries
      : this.#entries.filter((e) => e.accountId === accountId);
  }

  /**
   * The three invariants: no negative balance, balances equal their entries, and at most one
   * effect per idempotency key while the key is kept (`keyTtlMs`; a key may be reused after).
   */
  violations(keyTtlMs: number, accountId?: string): string[] {
    const out: string[] = [];
    const sums = new Map<string, number>();
    const owners = new Map<string, string>();
    // key -> effect -> when the effect began
    const effects = new Map<string, Map<string, number>>();
    for (const e of this.entries(accountId)) {
      owners.set(e.balance, e.accountId);
      sums.set(e.balance, (sums.get(e.balance) ?? 0) + e.delta);
      if (e.idempotencyKey !== null && e.effectId !== null) {
        const k = `${e.accountId} ${e.idempotencyKey}`;
        const byEffect = effects.get(k) ?? new Map<string, number>();
        if (!byEffect.has(e.effectId)) byEffect.set(e.effectId, Date.parse(e.at));
        effects.set(k, byEffect);
      }
    }
    for (const [name, value] of this.#balances) {
      if (accountId !== undefined && owners.get(name) !== accountId) continue;
      if (value < 0) out.push(`balance ${name} is negative (${value})`);
      if ((sums.get(name) ?? 0) !== value) {
        out.push(`balance ${name} is ${value} but its entries sum to ${sums.get(name) ?? 0}`);
      }
    }
    for (const [k, byEffect] of effects) {
      const starts = [...byEffect].sort((a, b) => a[1] - b[1]);
      for (let i = 1; i < starts.length; i += 1) {
        const [prevId, prevAt] = starts[i - 1] as [string, number];
        const [id, at] = starts[i] as [string, number];
        if (at - prevAt < keyTtlMs) {
          out.push(`idempotency key ${k} has two effects within its retention: ${prevId}, ${id}`);
        }
      }
    }
    return out;
  }
}
