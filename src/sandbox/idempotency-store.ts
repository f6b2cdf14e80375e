import type { SandboxClock } from "./clock.js";

export interface StoredAnswer {
  readonly status: number;
  readonly body: unknown;
}

type Entry =
  | { readonly state: "in_flight"; readonly fingerprint: string }
  | {
      readonly state: "done";
      readonly fingerprint: string;
      readonly answer: StoredAnswer;
      readonly expiresAt: number;
    };

export type Begin =
  | { readonly kind: "new" }
  | { readonly kind: "replay"; readonly answer: StoredAnswer }
  | { readonly kind: "in_flight" }
  | { readonly kind: "mismatch" };

/**
 * Keys per account. Only answers that had an effect are stored: a refused request (validation,
 * insufficient funds) leaves the key free, so a corrected retry with the same key works.
 */
export class IdempotencyStore {
  readonly #entries = new Map<string, Entry>();
  readonly #ttlMs: number;
  readonly #clock: SandboxClock;

  constructor(ttlMs: number, clock: SandboxClock) {
    this.#ttlMs = ttlMs;
    this.#clock = clock;
  }

  begin(accountId: string, key: string, fingerprint: string): Begin {
    this.#purge();
    const id = `${accountId}\u0000${key}`;
    const entry = this.#entries.get(id);
    if (entry === undefined || (entry.state === "done" && entry.expiresAt <= this.#clock.now())) {
      this.#entries.delete(id);
      this.#entries.set(id, { state: "in_flight", fingerprint });
      return { kind: "new" };
    }
    if (entry.fingerprint !== fingerprint) return { kind: "mismatch" };
    if (entry.state === "in_flight") return { kind: "in_flight" };
    return { kind: "replay", answer: entry.answer };
  }

  complete(accountId: string, key: string, answer: StoredAnswer): void {
    const id = `${accountId}\u0000${key}`;
    const entry = this.#entries.get(id);
    if (entry === undefined) return;
    this.#entries.set(id, {
      state: "done",
      fingerprint: entry.fingerprint,
      answer,
      expiresAt: this.#clock.now() + this.#ttlMs,
    });
  }

  /** The request had no effect: free the key. */
  abandon(accountId: string, key: string): void {
    this.#entries.delete(`${accountId}\u0000${key}`);
  }

  size(): number {
    return this.#entries.size;
  }

  /** Entries are kept in the order they began, so expired ones gather at the front. */
  #purge(): void {
    const now = this.#clock.now();
    for (const [id, entry] of this.#entries) {
      if (entry.state === "done" && entry.expiresAt <= now) this.#entries.delete(id);
      else break;
    }
  }
}
