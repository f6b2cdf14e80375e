interface Waiting<In, Out> {
  readonly item: In;
  readonly resolve: (out: Out) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Runs one call at a time (or `inFlight`) and gathers the calls that arrive meanwhile into the
 * next one: a lone call leaves at once, and under load N concurrent jobs cost one Redis round
 * trip instead of N. `run` answers its items in order, one output per item. More than one in
 * flight is for calls timed to a moment, which must not wait for a slow answer to the last.
 */
export class Coalescer<In, Out> {
  readonly #run: (items: readonly In[]) => Promise<readonly Out[]>;
  readonly #maxItems: number;
  readonly #inFlight: number;
  #waiting: Waiting<In, Out>[] = [];
  #running = 0;

  constructor(
    run: (items: readonly In[]) => Promise<readonly Out[]>,
    maxItems: number,
    inFlight = 1,
  ) {
    this.#run = run;
    this.#maxItems = maxItems;
    this.#inFlight = inFlight;
  }

  add(item: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject });
      this.#next();
    });
  }

  #next(): void {
    if (this.#running >= this.#inFlight || this.#waiting.length === 0) return;
    const batch = this.#waiting.splice(0, this.#maxItems);
    this.#running += 1;
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
        this.#running -= 1;
        this.#next();
      });
  }
}
