/** What a numbered log keeps of each entry: its number, and the account it is about. */
export interface NumberedEntry {
  readonly seq: number;
  readonly accountId: string | null;
}

/** An entry as given to the log, before it is numbered (each member of a union alike). */
export type Unnumbered<T> = T extends unknown ? Omit<T, "seq"> : never;

/**
 * The last `capacity` entries, numbered from 1 in the order they came; a test lists them by
 * account and after the last number it saw.
 */
export class NumberedLog<T extends NumberedEntry> {
  readonly #capacity: number;
  readonly #ring: T[] = [];
  #seq = 0;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** Numbers and keeps `entry`, dropping the oldest past the capacity; returns it numbered. */
  protected append(entry: Unnumbered<T>): T {
    this.#seq += 1;
    const numbered = { seq: this.#seq, ...entry } as T;
    if (this.#ring.length >= this.#capacity) this.#ring.shift();
    this.#ring.push(numbered);
    return numbered;
  }

  /** Replaces entry `seq`, while it is still kept, with what `change` makes of it. */
  protected update(seq: number, change: (entry: T) => T): void {
    const at = this.#ring.findLastIndex((e) => e.seq === seq);
    const entry = this.#ring[at];
    if (entry) this.#ring[at] = change(entry);
  }

  list(filter: { accountId?: string; afterSeq?: number }): T[] {
    return this.#ring.filter(
      (e) =>
        (filter.accountId === undefined || e.accountId === filter.accountId) &&
        (filter.afterSeq === undefined || e.seq > filter.afterSeq),
    );
  }
}
