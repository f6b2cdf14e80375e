import type { Call } from "./call-upstream.js";
import type { Action } from "./classify.js";

/** What the classifier decided of a run's call, with what acting on it needs. */
export interface Decision extends Call {
  readonly action: Action;
  /** When processing of the job first began, kept across attempts and lookups. */
  readonly firstStartedAt: number;
}
