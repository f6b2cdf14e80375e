/** The first slab; each next one is twice the last, up to SLAB_BYTES (a small batch stays small). */
const FIRST_SLAB_BYTES = 64 * 1024;
/** Bytes per slab at most; a value longer than this gets a slab of its own. */
const SLAB_BYTES = 4 * 1024 * 1024;

/**
 * The accepted rows of a batch while the rest of the file is validated: each row's value is
 * held as JSON in buffers outside the JS heap (up to 4 MB each), with its row number and reference.
 *
 * Why not the objects themselves: a 100,000-row file keeps some 100,000 small object graphs
 * alive until it is enqueued; V8 then sizes its heap to a multiple of that live set, and the
 * garbage of enqueueing piles up to hundreds of MB before a full collection (measured in
 * docs/performance.md). Held as bytes, the live heap stays small and so does the process.
 */
export class HeldRows<T> {
  readonly #slabs: Buffer[] = [];
  #used = SLAB_BYTES;
  /** Per row: slab index, start and end within it. */
  readonly #slab: number[] = [];
  readonly #start: number[] = [];
  readonly #end: number[] = [];
  readonly #rows: number[] = [];
  readonly #references: string[] = [];

  get length(): number {
    return this.#rows.length;
  }

  /** Holds `value` (serialised with JSON.stringify) for `row`; returns its index. */
  add(row: number, reference: string, value: T): number {
    const json = JSON.stringify(value);
    const bytes = Buffer.byteLength(json);
    let slab = this.#slabs.at(-1);
    if (slab === undefined || this.#used + bytes > slab.length) {
      const size = Math.min(SLAB_BYTES, slab === undefined ? FIRST_SLAB_BYTES : slab.length * 2);
      slab = Buffer.allocUnsafeSlow(Math.max(size, bytes));
      this.#slabs.push(slab);
      this.#used = 0;
    }
    slab.write(json, this.#used);
    this.#slab.push(this.#slabs.length - 1);
    this.#start.push(this.#used);
    this.#used += bytes;
    this.#end.push(this.#used);
    this.#rows.push(row);
    this.#references.push(reference);
    return this.#rows.length - 1;
  }

  row(index: number): number {
    return this.#at(this.#rows, index);
  }

  reference(index: number): string {
    return this.#at(this.#references, index);
  }

  /** A fresh copy of the value held at `index`. */
  value(index: number): T {
    const slab = this.#slabs[this.#at(this.#slab, index)] as Buffer;
    return JSON.parse(
      slab.toString("utf8", this.#at(this.#start, index), this.#at(this.#end, index)),
    );
  }

  #at<V>(list: readonly V[], index: number): V {
    const v = list[index];
    if (v === undefined) throw new RangeError(`HeldRows: no row at index ${index}`);
    return v;
  }
}
