/** A list's time window as the contract reads it: `since` inclusive, `until` exclusive. */
export interface ListWindow {
  readonly since?: string | undefined;
  readonly until?: string | undefined;
}

/** Whether a record created at `createdAt` (ISO 8601) falls in the window, to the millisecond. */
export function inWindow(createdAt: string, window: ListWindow): boolean {
  const at = Date.parse(createdAt);
  if (window.since !== undefined && at < Date.parse(window.since)) return false;
  if (window.until !== undefined && at >= Date.parse(window.until)) return false;
  return true;
}
