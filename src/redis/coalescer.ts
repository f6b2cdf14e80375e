interface Waiting<In, Out> {
  readonly item: In;
  readonly resolve: (out: Out) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Runs one call at a time and gathers the calls that arrive meanwhile into the next one: a
 * lone call leaves at once, and under load N concurrent jobs cost one Redis round trip
 * instead of N. `run` answers its items in order, one output per item.
 */
export class Coalescer<In, Out> {
  readonly #run: (items: readonly In[]) => Promise<readonly Out[]>;
  readonly #maxItems: number;
  #waiting: Waiting<In, Out>[] = [];
  #busy = false;

  constructor(run: (items: readonly In[]) => Promise<readonly Out[]>, maxItems: number) {
    this.#run = run;
    this.#maxItems = maxItems;
  }

  add(item: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject });
      this.#next();
    });
  }

  #next(): void {
    if (this.#busy || this.#waiting.length === 0) return;
    const batch = this.#waiting.splice(0, this.#maxItems);
    this.#busy = true;
    let ran: Promise<readonly Out[]>;
    try {
      ran = this.#run(batch.map((w) => w.item));
    } catch (error) {
      ran = Promise.reject(error);
    }
    ran
      .then(
        (outs) => {
          batch.forEach((w, i) => {
            w.resolve(outs[i] as Out);
          });
        },
        (error: unknown) => {
          for (const w of batch) w.reject(error);
        },
      )
      .finally(() => {
        this.#busy = false;
        this.#next();
      });
  }
}
