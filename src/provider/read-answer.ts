import {
  AdapterFailure,
  type AdapterFields,
  callAdapter,
  type ProviderAdapter,
} from "./adapter.js";
import { cutText } from "./bounds.js";
import { valueAt } from "./paths.js";
import {
  type AnswerOperation,
  type AnswerPaths,
  LIST_OPERATIONS,
  type ListOperation,
  type ProviderProfile,
  STATUS_LISTS,
  statusKey,
} from "./profile.js";

/** What a provider status word means; "unknown" is in none of the profile's lists. */
export type StatusMeaning = "succeeded" | "pending" | "failed" | "reversed" | "unknown";

/** Where a provider status word sits in the profile's lists (case-insensitive unless set). */
export function statusMeaning(profile: ProviderProfile, status: string): StatusMeaning {
  const key = statusKey(profile, status);
  for (const list of STATUS_LISTS) {
    if (profile.statuses[list].some((w) => statusKey(profile, w) === key)) return list;
  }
  return "unknown";
}

/** What one answer's `data` says, read through the profile. */
export interface AnswerFields {
  readonly id: string | undefined;
  readonly status: string | undefined;
  readonly failureReason: string | undefined;
  /** The id of the transaction that reversed this one, where the answer names one. */
  readonly reversedBy?: string | undefined;
}

/** A status longer than this, or with control characters, is unreadable. */
export const MAX_STATUS_CHARS = 64;
/** An id longer than this, or with control characters, is unreadable. */
export const MAX_ID_CHARS = 256;

const readableText = (value: string, max: number): string | undefined =>
  value.length > 0 && value.length <= max && !/\p{Cc}/u.test(value) ? value : undefined;

/**
 * An id: a string, or a whole number JavaScript holds exactly. A larger number (an int64 id)
 * was already rounded by JSON.parse: looking it up would ask for another transaction.
 */
function readId(value: unknown): string | undefined {
  if (typeof value === "string") return readableText(value, MAX_ID_CHARS);
  if (typeof value === "number" && Number.isSafeInteger(value)) return String(value);
  return undefined;
}

/** A status is a word: a short string, never a number, null, array or object. */
function readStatus(value: unknown): string | undefined {
  return typeof value === "string" ? readableText(value, MAX_STATUS_CHARS) : undefined;
}

/** The failure reason as kept: a non-empty string, cut. */
function readReason(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? cutText(value) : undefined;
}

/** The fields at `paths` in `data`. */
function readAtPaths(paths: AnswerPaths, data: unknown): AnswerFields {
  const reversedBy =
    paths.reversedBy === undefined ? undefined : readId(valueAt(data, paths.reversedBy));
  return {
    id: readId(valueAt(data, paths.id)),
    status: readStatus(valueAt(data, paths.status)),
    failureReason: readReason(valueAt(data, paths.failureReason)),
    ...(reversedBy !== undefined && { reversedBy }),
  };
}

/**
 * What an adapter read, held to the rules of a profile's reading: anything but an object of
 * these fields is unreadable (AdapterFailure), and a field of the wrong kind is not there.
 */
function adapterFields(fn: string, read: AdapterFields): AnswerFields {
  if (read === null || typeof read !== "object" || Array.isArray(read))
    throw new AdapterFailure(fn, "returned something that is not { id, status, failureReason }");
  const reversedBy = readId(read.reversedBy);
  return {
    id: readId(read.id),
    status: readStatus(read.status),
    failureReason: readReason(read.failureReason),
    ...(reversedBy !== undefined && { reversedBy }),
  };
}

/**
 * Reads the id, status and failure reason of an operation's answer: through the adapter when
 * it reads this answer, else at the profile's paths.
 */
export function readAnswerFields(
  profile: ProviderProfile,
  operation: AnswerOperation,
  data: unknown,
  adapter?: ProviderAdapter,
): AnswerFields {
  const read = callAdapter(adapter, "readAnswer", operation, data);
  if (read !== undefined) return adapterFields("readAnswer", read);
  return readAtPaths(profile.answers[operation], data);
}

/** Where a list's items keep their id, status and reason: the list's own paths, else its lookup's. */
export function listItemPaths(profile: ProviderProfile, list: ListOperation): AnswerPaths {
  const shape = profile.lists[list];
  const lookup = profile.answers[LIST_OPERATIONS[list]];
  const reversedBy = shape.reversedBy ?? lookup.reversedBy;
  return {
    id: shape.id ?? lookup.id,
    status: shape.status ?? lookup.status,
    failureReason: shape.failureReason ?? lookup.failureReason,
    ...(reversedBy !== undefined && { reversedBy }),
  };
}

/** A list answer's items (through the adapter, else at the profile's path); undefined when none. */
export function listItems(
  profile: ProviderProfile,
  list: ListOperation,
  data: unknown,
  adapter?: ProviderAdapter,
): readonly unknown[] | undefined {
  const items = callAdapter(adapter, "listItems", list, data);
  if (items !== undefined) {
    if (!Array.isArray(items))
      throw new AdapterFailure("listItems", "returned something not a list");
    return items;
  }
  const found = valueAt(data, profile.lists[list].items);
  return Array.isArray(found) ? found : undefined;
}

/** One list item's id, status and reason (through the adapter, else at the list's paths). */
export function readListItem(
  profile: ProviderProfile,
  list: ListOperation,
  item: unknown,
  adapter?: ProviderAdapter,
): AnswerFields {
  const read = callAdapter(adapter, "readListItem", list, item);
  if (read !== undefined) return adapterFields("readListItem", read);
  return readAtPaths(listItemPaths(profile, list), item);
}

/**
 * The job's reading of an answer: what it means, or which entries of the profile could not be
 * read from it (`answers.<operation>.<field> (path)`).
 */
export type JobReading =
  | {
      readonly understood: true;
      readonly meaning: StatusMeaning;
      readonly fields: AnswerFields;
    }
  | {
      readonly understood: false;
      readonly unread: readonly string[];
      readonly fields: AnswerFields;
    };

/**
 * `needs` says what this answer must carry: a submission that will be looked up needs the id;
 * every answer but a creation's needs the status.
 */
export function readJobAnswer(
  profile: ProviderProfile,
  operation: AnswerOperation,
  data: unknown,
  needs: { readonly id: boolean; readonly status: boolean },
  adapter?: ProviderAdapter,
): JobReading {
  const read = callAdapter(adapter, "readAnswer", operation, data);
  const fields =
    read === undefined
      ? readAtPaths(profile.answers[operation], data)
      : adapterFields("readAnswer", read);
  const where = (field: "id" | "status") =>
    read === undefined
      ? `answers.${operation}.${field} (${profile.answers[operation][field]})`
      : `${field} (as the adapter's readAnswer read it)`;
  const unread: string[] = [];
  if (needs.id && fields.id === undefined) unread.push(where("id"));
  if (needs.status && fields.status === undefined) unread.push(where("status"));
  if (unread.length > 0) return { understood: false, unread, fields };
  // A creation's definite `success: true` is its success, whatever else its data says.
  const meaning = needs.status ? statusMeaning(profile, fields.status as string) : "succeeded";
  return { understood: true, meaning, fields };
}
