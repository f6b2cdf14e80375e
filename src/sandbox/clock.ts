/** Wall time plus an offset that the control API can advance, so PENDING work resolves on demand. */
export class SandboxClock {
  #offsetMs = 0;

  now(): number {
    return Date.now() + this.#offsetMs;
  }

  iso(at: number = this.now()): string {
    return new Date(at).toISOString();
  }

  advance(ms: number): void {
    this.#offsetMs += ms;
  }
}
