/** What one moneyq process runs: the HTTP API, the workers, or both. */
export type Role = "api" | "worker" | "all";
export const ROLES: readonly Role[] = ["api", "worker", "all"];
