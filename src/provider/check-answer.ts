import type { OperationId } from "../contract/operations.js";
import { callAdapter, type ProviderAdapter } from "./adapter.js";
import { valueAt } from "./paths.js";
import {
  type AnswerOperation,
  type AnswerPaths,
  LIST_OPERATIONS,
  type ListOperation,
  type ProviderProfile,
  type RateOperation,
} from "./profile.js";
import {
  type AnswerFields,
  listItemPaths,
  listItems,
  readAnswerFields,
  readListItem,
  statusMeaning,
} from "./read-answer.js";
import { likelyPaths } from "./suggest-profile.js";

/** What one real answer showed about the profile: the entries it read, and those it could not. */
export interface OperationCheck {
  readonly operation: OperationId;
  /** How the report names it, when not by its operation alone (a saved answer's file). */
  readonly label?: string;
  /** Fields found, as `entry (path) = value`. */
  readonly found: readonly string[];
  /** Entries that could not be read, as `entry (path): what the answer holds there`. */
  readonly problems: readonly string[];
  /** What this answer could not settle, and why (an empty list, a refused key, no answer). */
  readonly notVerified: readonly string[];
  /** Readable, but worth a look (a status in none of the lists). */
  readonly warnings: readonly string[];
  /** The entries read on this real answer (`answers.withdrawToBank.id`, `lists.listOrders.items`). */
  readonly verified: readonly string[];
}

/** The entry of a check that could not be made at all. */
export function unverifiedCheck(operation: OperationId, why: string): OperationCheck {
  return { operation, found: [], problems: [], notVerified: [why], warnings: [], verified: [] };
}

/** How the profile (and adapter) read a provider's answers. */
export interface Reader {
  readonly profile: ProviderProfile;
  readonly adapter?: ProviderAdapter | undefined;
}

const shown = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
};

/** The fields of an object, or what the value is. */
export function shapeOf(value: unknown): string {
  if (Array.isArray(value)) return `a list of ${value.length}`;
  if (value === null || typeof value !== "object") return shown(value);
  const keys = Object.keys(value);
  return keys.length === 0 ? "an object with no fields" : `an object with ${keys.join(", ")}`;
}

/** What `data` holds at `path`, for a line that says why the entry could not be read there. */
export function holdsAt(data: unknown, path: string, what = "the answer"): string {
  const value = valueAt(data, path);
  if (value !== undefined) return `${path} holds ${shapeOf(value)}`;
  const parts = path.split(".");
  for (let n = parts.length - 1; n > 0; n -= 1) {
    const above = valueAt(data, parts.slice(0, n).join("."));
    if (above !== undefined)
      return `nothing at ${path}; ${parts.slice(0, n).join(".")} is ${shapeOf(above)}`;
  }
  return `nothing at ${path}; ${what} is ${shapeOf(data)}`;
}

type Field = "id" | "status";

/** Where an id or status that could not be read likely is, as a hint (never a change made). */
function hintFor(data: unknown, field: Field, entry: string): string {
  const likely = likelyPaths(data)[field];
  return likely === undefined
    ? ""
    : `; ${entry} could be "${likely.path}" (${shown(likely.value)})`;
}

/**
 * Checks a submission's or a lookup's real answer: `needs` says which of its entries the
 * pipeline reads (the id of a submission that is looked up, the status of all but a creation).
 */
export function checkRecordAnswer(
  reader: Reader,
  operation: AnswerOperation,
  data: unknown,
  needs: { readonly id: boolean; readonly status: boolean },
  lists: readonly ListOperation[] = [],
): OperationCheck {
  const { profile, adapter } = reader;
  const fields = readAnswerFields(profile, operation, data, adapter);
  const paths = profile.answers[operation];
  const through = adapter?.readAnswer === undefined ? undefined : "the adapter's readAnswer";
  const found: string[] = [];
  const problems: string[] = [];
  const warnings: string[] = [];
  const verified: string[] = [];
  for (const field of ["id", "status"] as const) {
    const entry = `answers.${operation}.${field}`;
    const where = `${entry} (${through ?? paths[field]})`;
    const value = fields[field];
    if (value !== undefined) {
      found.push(
        `${where} = ${value}${field === "status" ? ` (${statusMeaning(profile, value)})` : ""}`,
      );
      verified.push(entry);
    } else if (needs[field]) {
      const holds = through === undefined ? holdsAt(data, paths[field]) : "it read none";
      problems.push(
        `${where}: ${holds}${hintFor(data, field, entry)}${followedBy(profile, operation, field, lists)}`,
      );
    }
  }
  if (fields.failureReason !== undefined)
    found.push(
      `answers.${operation}.failureReason (${through ?? paths.failureReason}) = ${shown(fields.failureReason)}`,
    );
  if (fields.status !== undefined && statusMeaning(profile, fields.status) === "unknown")
    warnings.push(unknownStatus(fields.status));
  return { operation, found, problems, notVerified: [], warnings, verified };
}

/**
 * A lookup's paths are also a list's when it sets none of its own: a change to them changes
 * how that list is read, which the line says so that fixing one entry does not break another.
 */
function followedBy(
  profile: ProviderProfile,
  operation: AnswerOperation,
  field: Field,
  lists: readonly ListOperation[],
): string {
  const following = lists.filter(
    (list) => LIST_OPERATIONS[list] === operation && profile.lists[list][field] === undefined,
  );
  if (following.length === 0) return "";
  return ` (${following.map((l) => `lists.${l}.${field}`).join(", ")} follows it: set it to the item's own path if the list's items differ)`;
}

const unknownStatus = (word: string) =>
  `status "${word}" is in none of the profile's lists: moneyq treats it as pending`;

/** Items of a list looked at, so a long history costs no time. */
const ITEMS_CHECKED = 20;

/** A list answer checked: its items, and the id and status of each of the first ones. */
export interface ListCheck extends OperationCheck {
  /** The items' fields as read, for the lookups and searches that follow. */
  readonly items: readonly AnswerFields[];
}

/** Checks a list's real answer: where its items are, and each item's id and status. */
export function checkListAnswer(reader: Reader, list: ListOperation, data: unknown): ListCheck {
  const { profile, adapter } = reader;
  const shape = profile.lists[list];
  const items = listItems(profile, list, data, adapter);
  const itemsWhere = `lists.${list}.items (${adapter?.listItems === undefined ? shape.items : "the adapter's listItems"})`;
  if (items === undefined) {
    const problem = `${itemsWhere}: ${adapter?.listItems === undefined ? holdsAt(data, shape.items) : "it found none"}`;
    return {
      operation: list,
      found: [],
      problems: [problem],
      notVerified: [],
      warnings: [],
      verified: [],
      items: [],
    };
  }
  const checked = items
    .slice(0, ITEMS_CHECKED)
    .map((item) => readListItem(profile, list, item, adapter));
  const result = itemProblems(reader, list, items, checked);
  const found = [`${itemsWhere}: ${items.length} items`, ...result.found];
  const notVerified =
    items.length === 0
      ? [
          `lists.${list}.id and .status: no item in the list to read them from; check again once there is one`,
        ]
      : [];
  const verified = [
    `lists.${list}.items`,
    ...(items.length > 0 && result.problems.length === 0
      ? [`lists.${list}.id`, `lists.${list}.status`]
      : []),
  ];
  return {
    operation: list,
    found,
    problems: result.problems,
    notVerified,
    warnings: result.warnings,
    verified,
    items: checked,
  };
}

function itemProblems(
  reader: Reader,
  list: ListOperation,
  items: readonly unknown[],
  checked: readonly AnswerFields[],
): { found: string[]; problems: string[]; warnings: string[] } {
  const { profile, adapter } = reader;
  const paths: AnswerPaths = listItemPaths(profile, list);
  const through = adapter?.readListItem === undefined ? undefined : "the adapter's readListItem";
  const own = (field: Field) =>
    profile.lists[list][field] === undefined ? `, the lookup's path` : "";
  const problems: string[] = [];
  const unknown = new Set<string>();
  checked.forEach((fields, i) => {
    for (const field of ["id", "status"] as const) {
      if (fields[field] !== undefined) continue;
      const entry = `lists.${list}.${field}`;
      const where = `${entry} (${through ?? `${paths[field]}${own(field)}`})`;
      const holds =
        through === undefined ? holdsAt(items[i], paths[field], "the item") : "it read none";
      problems.push(`${where}: in item ${i}, ${holds}${hintFor(items[i], field, entry)}`);
    }
    if (fields.status !== undefined && statusMeaning(profile, fields.status) === "unknown")
      unknown.add(fields.status);
  });
  const first = checked[0];
  const found =
    first?.id !== undefined && first.status !== undefined
      ? [
          `lists.${list}.id (${through ?? paths.id}) = ${first.id}`,
          `lists.${list}.status (${through ?? paths.status}) = ${first.status} (${statusMeaning(profile, first.status)})`,
        ]
      : [];
  return { found, problems: dedupe(problems), warnings: [...unknown].map(unknownStatus) };
}

/** The same line for every item says it once (for the first), with how many items it held for. */
function dedupe(lines: readonly string[]): string[] {
  const first = new Map<string, { line: string; n: number }>();
  for (const line of lines) {
    const key = line.replace(/in item \d+, /, "").replace(/ could be "[^"]*" \(.*\)$/, "");
    const seen = first.get(key);
    if (seen) seen.n += 1;
    else first.set(key, { line, n: 1 });
  }
  return [...first.values()].map(({ line, n }) => (n > 1 ? `${line} (so in ${n} items)` : line));
}

/** Checks a rate lookup's real answer: a number (or a number in a string), where it is read. */
export function checkRateAnswer(
  reader: Reader,
  operation: RateOperation,
  data: unknown,
): OperationCheck {
  const { profile, adapter } = reader;
  const path = profile.rates[operation].rate;
  const said = callAdapter(adapter, "readRate", operation, data);
  const rate = said ?? valueAt(data, path);
  const where = said === undefined ? path : "the adapter's readRate";
  const numeric =
    typeof rate === "number" ||
    (typeof rate === "string" && rate.trim() !== "" && Number.isFinite(Number(rate)));
  const entry = `rates.${operation}.rate`;
  if (numeric)
    return {
      operation,
      found: [`${entry} (${where}) = ${rate}`],
      problems: [],
      notVerified: [],
      warnings: [],
      verified: [entry],
    };
  const holds = said === undefined ? holdsAt(data, path) : `it read ${shown(said)}`;
  return {
    operation,
    found: [],
    problems: [`${entry} (${where}): no number there; ${holds}`],
    notVerified: [],
    warnings: [],
    verified: [],
  };
}
