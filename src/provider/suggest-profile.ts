import { valueAt } from "./paths.js";
import {
  ANSWER_OPERATIONS,
  type AnswerOperation,
  LIST_OPERATIONS,
  type ListOperation,
  RATE_OPERATIONS,
  type RateOperation,
} from "./profile.js";
import { MAX_ID_CHARS, MAX_STATUS_CHARS } from "./read-answer.js";

/** A value found in an answer, and the dotted path it sits at. */
export interface Found {
  readonly path: string;
  readonly value: unknown;
}

/** Status words a provider is likely to use, by what they most often mean. */
const LIKELY_WORDS = {
  succeeded: [
    "successful",
    "success",
    "succeeded",
    "completed",
    "complete",
    "paid",
    "settled",
    "done",
  ],
  pending: [
    "pending",
    "processing",
    "queued",
    "initiated",
    "in_progress",
    "submitted",
    "created",
    "accepted",
    "new",
  ],
  failed: [
    "failed",
    "failure",
    "declined",
    "rejected",
    "cancelled",
    "canceled",
    "expired",
    "error",
  ],
} as const;
type Meaning = keyof typeof LIKELY_WORDS;

const WORD_MEANING = new Map<string, Meaning>(
  (Object.entries(LIKELY_WORDS) as [Meaning, readonly string[]][]).flatMap(([meaning, words]) =>
    words.map((w) => [w, meaning] as const),
  ),
);

/** Keys of another resource's id, which are never the record's own. */
const OTHER_IDS =
  /^(sub_?account|offer|user|customer|merchant|business|wallet|bank|network|chain|asset|currency|country|payment_?link|request|trace|idempotency)_?id$/i;

interface Leaf {
  readonly path: string;
  readonly key: string;
  readonly parent: string;
  readonly value: unknown;
  readonly depth: number;
}

const MAX_DEPTH = 4;

/** Every value in `data` reached through objects (never lists), with its path. */
function leaves(data: unknown, prefix = "", depth = 0, out: Leaf[] = []): Leaf[] {
  if (data === null || typeof data !== "object" || Array.isArray(data) || depth > MAX_DEPTH)
    return out;
  for (const [key, value] of Object.entries(data)) {
    if (key.includes(".") || /\s/.test(key)) continue;
    const path = prefix === "" ? key : `${prefix}.${key}`;
    out.push({ path, key, parent: prefix, value, depth });
    leaves(value, path, depth + 1, out);
  }
  return out;
}

function statusScore(leaf: Leaf): number {
  const { key, value } = leaf;
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_STATUS_CHARS) return 0;
  let score = 0;
  if (/^(status|state)$/i.test(key)) score += 3;
  else if (/(status|state)$/i.test(key)) score += 2;
  if (WORD_MEANING.has(value.trim().toLowerCase())) score += 3;
  return score >= 3 ? score - leaf.depth * 0.1 : 0;
}

function idScore(leaf: Leaf, statusParent: string | undefined): number {
  const { key, value } = leaf;
  const text = typeof value === "string" && value.length > 0 && value.length <= MAX_ID_CHARS;
  if (!text && !(typeof value === "number" && Number.isSafeInteger(value))) return 0;
  if (OTHER_IDS.test(key)) return 0;
  let score = 0;
  if (/^id$/i.test(key)) score = 4;
  else if (/(_id|Id)$/.test(key)) score = 3;
  else if (/^(reference|ref|uuid)$/i.test(key)) score = 1;
  else return 0;
  if (statusParent !== undefined && leaf.parent === statusParent) score += 1;
  return score - leaf.depth * 0.1;
}

function reasonScore(leaf: Leaf): number {
  const { key, parent, value } = leaf;
  if (value !== null && typeof value !== "string") return 0;
  if (/reason/i.test(key) || /^(failure|decline|error)_?(message|reason|description)?$/i.test(key))
    return 3 - leaf.depth * 0.1;
  if (/^(message|description)$/i.test(key) && /(error|failure)$/i.test(parent))
    return 2 - leaf.depth * 0.1;
  return 0;
}

function best(all: readonly Leaf[], score: (leaf: Leaf) => number): Found | undefined {
  let top: Leaf | undefined;
  let topScore = 0;
  for (const leaf of all) {
    const s = score(leaf);
    if (s > topScore) {
      top = leaf;
      topScore = s;
    }
  }
  return top === undefined ? undefined : { path: top.path, value: top.value };
}

/** Where an answer's (or a list item's) id, status and failure reason most likely sit. */
export function likelyPaths(data: unknown): {
  readonly id?: Found;
  readonly status?: Found;
  readonly failureReason?: Found;
} {
  const all = leaves(data);
  const status = best(all, statusScore);
  const statusParent =
    status === undefined ? undefined : all.find((l) => l.path === status.path)?.parent;
  const id = best(all, (leaf) => idScore(leaf, statusParent));
  const failureReason = best(all, reasonScore);
  return {
    ...(id !== undefined && { id }),
    ...(status !== undefined && { status }),
    ...(failureReason !== undefined && { failureReason }),
  };
}

const LIST_KEYS = /^(items|data|transactions|orders|results|records|list|rows|entries|content)$/i;

/** Where a list answer's items most likely are: a list of objects, by its name and length. */
export function likelyItems(data: unknown): Found | undefined {
  if (Array.isArray(data)) return undefined;
  let top: Found | undefined;
  let topScore = -1;
  const visit = (value: unknown, prefix: string, depth: number) => {
    if (value === null || typeof value !== "object" || depth > 3) return;
    for (const [key, inner] of Object.entries(value)) {
      const path = prefix === "" ? key : `${prefix}.${key}`;
      if (Array.isArray(inner)) {
        const objects = inner.every(
          (i) => i !== null && typeof i === "object" && !Array.isArray(i),
        );
        const score =
          (objects ? 2 : 0) +
          (LIST_KEYS.test(key) ? 2 : 0) +
          (inner.length > 0 ? 1 : 0) -
          depth * 0.1;
        if (objects && score > topScore) {
          top = { path, value: inner };
          topScore = score;
        }
      } else visit(inner, path, depth + 1);
    }
  };
  visit(data, "", 0);
  return top;
}

/** Where an answer's rate most likely is: a number (or a number in a string) named like one. */
export function likelyRate(data: unknown): Found | undefined {
  const numeric = (v: unknown) =>
    typeof v === "number" ||
    (typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v)));
  return best(leaves(data), (leaf) =>
    numeric(leaf.value) && /rate/i.test(leaf.key) ? 3 - leaf.depth * 0.1 : 0,
  );
}

/** The status word's likely meaning, or undefined when it is none of the likely words. */
export function likelyMeaning(word: string): Meaning | undefined {
  return WORD_MEANING.get(word.trim().toLowerCase());
}

/** Answers saved for one operation: the `data` of each success, the message of each refusal. */
export interface SavedAnswers {
  readonly data: readonly unknown[];
  readonly refusals: readonly { readonly message: string; readonly code?: string | undefined }[];
}

/** A proposed profile document, and what it could not place. */
export interface Suggestion {
  readonly profile: Record<string, unknown>;
  readonly notes: readonly string[];
}

/** The path most of the answers agree on. */
function vote(found: readonly (Found | undefined)[]): string | undefined {
  const counts = new Map<string, number>();
  for (const f of found) if (f !== undefined) counts.set(f.path, (counts.get(f.path) ?? 0) + 1);
  let top: string | undefined;
  let n = 0;
  for (const [path, count] of counts) if (count > n) [top, n] = [path, count];
  return top;
}

type Paths = { id?: string; status?: string; failureReason?: string };

function answerPaths(samples: readonly unknown[]): Paths {
  const found = samples.map((d) => likelyPaths(d));
  const paths: Paths = {};
  for (const field of ["id", "status", "failureReason"] as const) {
    const path = vote(found.map((f) => f[field]));
    if (path !== undefined) paths[field] = path;
  }
  return paths;
}

/**
 * A profile proposed from saved answers (docs/provider-profile.md, "provider suggest"): for
 * each operation with answers, where its id, status and reason most likely sit; for each list,
 * where its items are and the items' own paths where they differ from the lookup's; the status
 * words seen, placed by their likely meaning; refusal messages that likely mean insufficient
 * funds, a reused key or a key in flight. What it cannot place is in the notes.
 */
export function suggestProfile(saved: ReadonlyMap<string, SavedAnswers>): Suggestion {
  const notes: string[] = [];
  const answers: Record<string, Paths> = {};
  for (const op of ANSWER_OPERATIONS) {
    const samples = saved.get(op)?.data ?? [];
    if (samples.length === 0) continue;
    answers[op] = answerPaths(samples);
    for (const field of ["id", "status"] as const)
      if (answers[op]?.[field] === undefined)
        notes.push(`answers.${op}.${field}: no likely path in its answers`);
  }
  const lists = suggestLists(saved, answers, notes);
  const rates = suggestRates(saved, notes);
  const statuses = suggestStatuses(saved, answers, lists, notes);
  const refusals = suggestRefusals(saved);
  for (const op of ANSWER_OPERATIONS)
    if (answers[op] === undefined) notes.push(`answers.${op}: no success saved; the default stays`);
  notes.push(
    "requests (query and body names, the payment link, validFor's unit) are not in any answer: set them from the provider's documentation",
  );
  const profile: Record<string, unknown> = { answers, lists, rates, statuses };
  if (Object.keys(refusals).length > 0) profile.refusals = refusals;
  return { profile, notes };
}

function suggestLists(
  saved: ReadonlyMap<string, SavedAnswers>,
  answers: Record<string, Paths>,
  notes: string[],
): Record<string, Record<string, string>> {
  const lists: Record<string, Record<string, string>> = {};
  for (const list of Object.keys(LIST_OPERATIONS) as ListOperation[]) {
    const samples = saved.get(list)?.data ?? [];
    if (samples.length === 0) continue;
    const items = vote(samples.map((d) => likelyItems(d)));
    if (items === undefined) {
      notes.push(`lists.${list}.items: no list of objects in its answers`);
      continue;
    }
    const entry: Record<string, string> = { items };
    const itemSamples = samples.flatMap((d) => {
      const found = likelyItems(d);
      return found !== undefined && found.path === items
        ? (found.value as unknown[]).slice(0, 20)
        : [];
    });
    const own = answerPaths(itemSamples);
    const lookup = answers[LIST_OPERATIONS[list] as AnswerOperation] ?? {};
    for (const field of ["id", "status", "failureReason"] as const) {
      const path = own[field];
      // The lookup's paths are the default: only a list whose items differ says its own.
      if (path !== undefined && path !== lookup[field]) entry[field] = path;
      if (path === undefined && field !== "failureReason" && itemSamples.length > 0)
        notes.push(`lists.${list}.${field}: no likely path in its items`);
    }
    lists[list] = entry;
  }
  return lists;
}

function suggestRates(
  saved: ReadonlyMap<string, SavedAnswers>,
  notes: string[],
): Record<string, { rate: string }> {
  const rates: Record<string, { rate: string }> = {};
  for (const op of RATE_OPERATIONS as readonly RateOperation[]) {
    const samples = saved.get(op)?.data ?? [];
    if (samples.length === 0) continue;
    const rate = vote(samples.map((d) => likelyRate(d)));
    if (rate === undefined)
      notes.push(`rates.${op}.rate: no number named like a rate in its answers`);
    else rates[op] = { rate };
  }
  return rates;
}

/** Every status word the proposed paths read, placed by its likely meaning. */
function suggestStatuses(
  saved: ReadonlyMap<string, SavedAnswers>,
  answers: Record<string, Paths>,
  lists: Record<string, Record<string, string>>,
  notes: string[],
): Record<string, string[]> {
  const words = new Set<string>();
  const add = (data: unknown, path: string | undefined) => {
    const value = path === undefined ? undefined : valueAt(data, path);
    if (typeof value === "string" && value.trim() !== "") words.add(value.trim());
  };
  for (const [op, paths] of Object.entries(answers))
    for (const d of saved.get(op)?.data ?? []) add(d, paths.status);
  for (const [list, entry] of Object.entries(lists)) {
    const status = entry.status ?? answers[LIST_OPERATIONS[list as ListOperation]]?.status;
    for (const d of saved.get(list)?.data ?? []) {
      const items = valueAt(d, entry.items as string);
      if (Array.isArray(items)) for (const item of items) add(item, status);
    }
  }
  // The spec's own words (3) stay, so nothing it names is left out.
  const statuses: Record<Meaning, string[]> = {
    succeeded: ["SUCCESSFUL"],
    pending: ["PENDING"],
    failed: ["FAILED", "CANCELLED"],
  };
  for (const word of words) {
    const meaning = likelyMeaning(word);
    if (meaning === undefined) {
      notes.push(
        `status "${word}": its meaning is not clear; add it to succeeded, pending or failed (left out, it reads as pending)`,
      );
      continue;
    }
    if (!statuses[meaning].some((w) => w.toLowerCase() === word.toLowerCase()))
      statuses[meaning].push(word);
  }
  return statuses;
}

const escapeRegExp = (text: string) => text.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");

/** Refusal messages that likely mean insufficient funds, a reused key, or a key in flight. */
function suggestRefusals(
  saved: ReadonlyMap<string, SavedAnswers>,
): Record<string, { message: string }[]> {
  const patterns: [string, RegExp][] = [
    ["insufficientFunds", /insufficient|not enough (balance|funds)/i],
    ["keyReused", /different (request|body|payload|parameters)|already (been )?used/i],
    ["inFlight", /in progress|being processed|still processing/i],
  ];
  const out: Record<string, { message: string }[]> = {};
  for (const { refusals } of saved.values())
    for (const { message } of refusals) {
      const hit = patterns.find(([, p]) => p.test(message));
      if (hit === undefined) continue;
      const rules = out[hit[0]] ?? [];
      out[hit[0]] = rules;
      const rule = { message: `^${escapeRegExp(message.trim())}$` };
      if (!rules.some((r) => r.message === rule.message)) rules.push(rule);
    }
  return out;
}
