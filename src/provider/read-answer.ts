import { cutText } from "./bounds.js";
import { valueAt } from "./paths.js";
import { type AnswerOperation, type ProviderProfile, statusKey } from "./profile.js";

/** What a provider status word means; "unknown" is in none of the profile's lists. */
export type StatusMeaning = "succeeded" | "pending" | "failed" | "unknown";

/** Where a provider status word sits in the profile's lists (case-insensitive unless set). */
export function statusMeaning(profile: ProviderProfile, status: string): StatusMeaning {
  const key = statusKey(profile, status);
  for (const list of ["succeeded", "pending", "failed"] as const) {
    if (profile.statuses[list].some((w) => statusKey(profile, w) === key)) return list;
  }
  return "unknown";
}

/** What one answer's `data` says, read through the profile. */
export interface AnswerFields {
  readonly id: string | undefined;
  readonly status: string | undefined;
  readonly failureReason: string | undefined;
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

/** Reads the id, status and failure reason of an operation's answer at the profile's paths. */
export function readAnswerFields(
  profile: ProviderProfile,
  operation: AnswerOperation,
  data: unknown,
): AnswerFields {
  const paths = profile.answers[operation];
  const reason = valueAt(data, paths.failureReason);
  return {
    id: readId(valueAt(data, paths.id)),
    status: readStatus(valueAt(data, paths.status)),
    failureReason: typeof reason === "string" && reason.length > 0 ? cutText(reason) : undefined,
  };
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
): JobReading {
  const fields = readAnswerFields(profile, operation, data);
  const paths = profile.answers[operation];
  const unread: string[] = [];
  if (needs.id && fields.id === undefined) unread.push(`answers.${operation}.id (${paths.id})`);
  if (needs.status && fields.status === undefined)
    unread.push(`answers.${operation}.status (${paths.status})`);
  if (unread.length > 0) return { understood: false, unread, fields };
  // A creation's definite `success: true` is its success, whatever else its data says.
  const meaning = needs.status ? statusMeaning(profile, fields.status as string) : "succeeded";
  return { understood: true, meaning, fields };
}
