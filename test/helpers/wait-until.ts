/**
 * What a wait is for, named in its timeout error ("every result", "a 429 pause"); a function
 * can describe the last reading instead ("3 of 8 requests").
 */
export type WaitingFor<T> = string | ((last: T) => string | Promise<string>);

/**
 * Reads every `intervalMs` until `done` holds of a reading, and returns that reading. Once
 * `timeoutMs` has passed it throws, naming `what` and the time it waited.
 */
export async function waitFor<T>(
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  timeoutMs: number,
  what: WaitingFor<T>,
  intervalMs = 25,
): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    const waited = Date.now() - started;
    if (waited > timeoutMs) {
      const named = typeof what === "string" ? what : await what(value);
      throw new Error(`timed out after ${waited} ms (limit ${timeoutMs} ms) waiting for ${named}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Checks every `intervalMs` until `check` holds; throws as `waitFor` does. */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: WaitingFor<boolean>,
  intervalMs = 25,
): Promise<void> {
  await waitFor(check, (holds) => holds, timeoutMs, what, intervalMs);
}
