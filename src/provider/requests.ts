import type { FieldIssue } from "../contract/field-issues.js";
import type { OperationId } from "../contract/operations.js";
import { AdapterFailure, callAdapter, type ProviderAdapter } from "./adapter.js";
import {
  NAMED_QUERIES,
  OPEN_BODIES,
  type OpenBody,
  type ProviderProfile,
  type ValidForUnit,
} from "./profile.js";

/** A request's parts, as the client sends them and the sandbox receives them. */
export interface RequestParts {
  readonly params?: Record<string, unknown> | undefined;
  readonly query?: Record<string, unknown> | undefined;
  readonly body?: unknown;
}

const MINUTES_PER: Record<ValidForUnit, number> = { seconds: 1 / 60, minutes: 1, hours: 60 };

function renameKeys(
  source: Record<string, unknown> | undefined,
  names: Readonly<Record<string, string>>,
  reverse: boolean,
): Record<string, unknown> | undefined {
  if (!source) return source;
  const map = reverse
    ? Object.fromEntries(Object.entries(names).map(([ours, theirs]) => [theirs, ours]))
    : names;
  return Object.fromEntries(Object.entries(source).map(([k, v]) => [map[k] ?? k, v]));
}

const asObject = (body: unknown): Record<string, unknown> | undefined =>
  body !== null && typeof body === "object" && !Array.isArray(body)
    ? (body as Record<string, unknown>)
    : undefined;

/**
 * A request in our names (the contract's) as the provider of `profile` expects it: the names of
 * 4.4's enum fields and of 4.9, 4.11, 4.13 and 4.16's query parameters, 4.8's link token, 4.6's unit.
 * `reverse` turns a provider's request back into ours (the sandbox speaking a dialect).
 */
export function translateRequest(
  profile: ProviderProfile,
  id: OperationId,
  parts: RequestParts,
  reverse = false,
): RequestParts {
  const { requests } = profile;
  if (id in NAMED_QUERIES) {
    const names = requests.query[id as keyof typeof NAMED_QUERIES];
    return { ...parts, query: renameKeys(parts.query, names, reverse) };
  }
  const body = asObject(parts.body);
  if (id === "withdrawStable" && body) {
    return { ...parts, body: renameKeys(body, requests.stableWithdrawal, reverse) };
  }
  if (id === "createVirtualAccount" && body && typeof body.validFor === "number") {
    const factor = MINUTES_PER[requests.validForUnit];
    const validFor = reverse ? body.validFor * factor : body.validFor / factor;
    return { ...parts, body: { ...body, validFor } };
  }
  if (id === "declinePaymentLink")
    return moveLinkToken(requests.paymentLinkDecline, parts, reverse);
  return parts;
}

const plainObject = (value: unknown): boolean =>
  value === undefined || (value !== null && typeof value === "object" && !Array.isArray(value));

/**
 * A request in our names as the provider wants it: the adapter's shape when it gives one (an
 * object of `params`, `query` and `body`), else the profile's translation. An adapter that
 * throws or answers something else fails with an AdapterFailure: the request is not sent.
 */
export function shapeRequest(
  profile: ProviderProfile,
  id: OperationId,
  parts: RequestParts,
  adapter?: ProviderAdapter,
): RequestParts {
  const shaped = callAdapter(adapter, "shapeRequest", id, structuredClone(parts));
  if (shaped === undefined) return translateRequest(profile, id, parts);
  const { params, query, body } = (shaped ?? {}) as RequestParts;
  if (shaped === null || !plainObject(shaped) || !plainObject(params) || !plainObject(query))
    throw new AdapterFailure(
      "shapeRequest",
      "returned something that is not { params, query, body }",
    );
  return { params, query, body };
}

/** 4.8: our callers give the link as query `token`; the provider may want it elsewhere. */
function moveLinkToken(
  where: ProviderProfile["requests"]["paymentLinkDecline"],
  parts: RequestParts,
  reverse: boolean,
): RequestParts {
  const query = { ...(parts.query ?? {}) };
  const body = { ...(asObject(parts.body) ?? {}) };
  const from = reverse ? (where.in === "query" ? query : body) : query;
  const fromName = reverse ? where.name : "token";
  const token = from[fromName];
  if (token === undefined) return parts;
  delete from[fromName];
  const to = reverse ? query : where.in === "query" ? query : body;
  to[reverse ? "token" : where.name] = token;
  return {
    ...parts,
    query,
    body: parts.body === undefined && Object.keys(body).length === 0 ? undefined : body,
  };
}

/**
 * Fields of a 4.2, 4.4, 4.5 or 4.6 body that the profile requires and `body` lacks, as
 * issues; the spec itself requires none of them.
 */
export function missingRequiredFields(
  profile: ProviderProfile,
  id: OperationId,
  body: unknown,
): FieldIssue[] {
  if (!(id in OPEN_BODIES)) return [];
  const present = asObject(body) ?? {};
  return profile.requests.required[id as OpenBody]
    .filter((name) => present[name] === undefined)
    .map((name) => ({ field: name, rule: "required" }));
}

/**
 * Names in a provider's request that are ours, not the provider's (a `status` query where the
 * provider says `state`): a provider speaking its own dialect does not know them. Found by
 * turning the request into ours and back, and seeing which names did not survive.
 */
export function foreignNameIssues(
  profile: ProviderProfile,
  id: OperationId,
  parts: RequestParts,
): FieldIssue[] {
  const back = translateRequest(profile, id, translateRequest(profile, id, parts, true));
  const issues: FieldIssue[] = [];
  for (const part of ["query", "body"] as const) {
    const before = asObject(parts[part]) ?? {};
    const after = asObject(back[part]) ?? {};
    for (const name of Object.keys(before))
      if (!Object.hasOwn(after, name)) issues.push({ field: name, rule: "unknown field" });
  }
  return issues;
}

/**
 * 4.6: a `validFor` (minutes) the provider's unit cannot carry whole (45 minutes in hours is
 * 0.75): refused at enqueue rather than sent as a fraction the provider may round.
 */
export function validForIssues(
  profile: ProviderProfile,
  id: OperationId,
  body: unknown,
): FieldIssue[] {
  if (id !== "createVirtualAccount") return [];
  const validFor = asObject(body)?.validFor;
  if (typeof validFor !== "number") return [];
  const unit = profile.requests.validForUnit;
  const converted = validFor / MINUTES_PER[unit];
  if (Number.isInteger(converted)) return [];
  return [
    {
      field: "validFor",
      rule: `must be a whole number of ${unit} at this provider (minutes given)`,
    },
  ];
}

/** Every issue the provider profile finds in a request body before it is enqueued. */
export function profileRequestIssues(
  profile: ProviderProfile,
  id: OperationId,
  body: unknown,
): FieldIssue[] {
  return [...missingRequiredFields(profile, id, body), ...validForIssues(profile, id, body)];
}
