/**
 * The CLI's exit codes: 0 success, 1 failures in the result, 2 usage or validation errors,
 * 3 something needed could not be verified (`provider check`: nothing unreadable, no go-ahead).
 */
export const EXIT = Object.freeze({ ok: 0, failures: 1, usage: 2, notVerified: 3 });
