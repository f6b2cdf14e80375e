import type { Dispatcher } from "undici";
import type { ProviderAdapter } from "../provider/adapter.js";
import type { ProviderProfile } from "../provider/profile.js";

export interface PaymentsClientOptions {
  /** The provider's base address; must end with `/v1` (spec 9). */
  readonly baseUrl: string;
  /** Sent as `x-api-key` on every request; never logged or put in an error. */
  readonly apiKey: string;
  /** TCP and TLS connect timeout. Default 5000. */
  readonly connectTimeoutMs?: number;
  /** Time allowed for response headers, and between body chunks. Default 30000. */
  readonly requestTimeoutMs?: number;
  /** Connections kept to the upstream. Default 64. */
  readonly connections?: number;
  /** Idle keep-alive time of a pooled connection. Default 10000. */
  readonly keepAliveTimeoutMs?: number;
  /** Largest response body read before giving up. Default 4 MiB. */
  readonly maxResponseBytes?: number;
  /** Sent as `user-agent`. Default `moneyq`. */
  readonly userAgent?: string;
  /**
   * Use this dispatcher instead of the client's own Pool; the caller closes it. An undici 8
   * dispatcher: a request's `sendBy` is checked in its handler's `onRequestStart`.
   */
  readonly dispatcher?: Dispatcher;
  /** How the provider names what the spec leaves unshown (docs/provider-profile.md). Default: ours. */
  readonly profile?: ProviderProfile;
  /** Code for what the profile cannot say; what it leaves out, the profile says. */
  readonly adapter?: ProviderAdapter | undefined;
}

export const CLIENT_DEFAULTS = Object.freeze({
  connectTimeoutMs: 5_000,
  requestTimeoutMs: 30_000,
  connections: 64,
  keepAliveTimeoutMs: 10_000,
  maxResponseBytes: 4 * 1024 * 1024,
  userAgent: "moneyq",
});
