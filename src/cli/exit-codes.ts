/** The CLI's exit codes: 0 success, 1 failures in the result, 2 usage or validation errors. */
export const EXIT = Object.freeze({ ok: 0, failures: 1, usage: 2 });
