// The entry of `moneyq/provider`: the provider profile and the types of an adapter module
// (docs/provider-profile.md). Nothing here connects or loads the service.
export type {
  AdapterFields,
  ProviderAdapter,
  Refusal,
  RefusalKind,
} from "./adapter.js";
export {
  type AnswerOperation,
  DEFAULT_PROVIDER_PROFILE,
  type ListOperation,
  type ParsedProfile,
  type ProviderProfile,
  parseProviderProfile,
  type RateOperation,
  type RefusalMeaning,
} from "./profile.js";
export type { RequestParts } from "./requests.js";
