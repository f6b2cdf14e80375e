/** A dotted path into an answer's `data`: `transactionId`, `result.id`, `items.0.status`. */
export type FieldPath = string;

const segments = (path: FieldPath): string[] => path.split(".");

/** Names that reach an object's prototype when written to: never a path segment. */
export const FORBIDDEN_NAMES: ReadonlySet<string> = new Set([
  "__proto__",
  "constructor",
  "prototype",
]);
/** A path is at most this long, in characters and in segments. */
export const MAX_PATH_CHARS = 200;
export const MAX_PATH_SEGMENTS = 8;

/** Why `path` cannot be a profile path, or undefined when it can. */
export function pathProblem(path: FieldPath): string | undefined {
  const keys = segments(path);
  if (keys.some((k) => FORBIDDEN_NAMES.has(k)))
    return "must not use __proto__, constructor or prototype as a segment";
  if (path.length > MAX_PATH_CHARS || keys.length > MAX_PATH_SEGMENTS)
    return `must be at most ${MAX_PATH_CHARS} characters in at most ${MAX_PATH_SEGMENTS} segments`;
  return undefined;
}

/** Sets `key` as `target`'s own property: never a setter, never the prototype. */
function defineOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/** The value at `path` in `value`, or undefined when any step is missing. */
export function valueAt(value: unknown, path: FieldPath): unknown {
  let current: unknown = value;
  for (const key of segments(path)) {
    if (current === null || typeof current !== "object") return undefined;
    if (!Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** Sets `path` in `target`, creating objects on the way; `undefined` leaves `target` as it is. */
export function setAt(target: Record<string, unknown>, path: FieldPath, value: unknown): void {
  if (value === undefined) return;
  const problem = pathProblem(path);
  if (problem !== undefined) throw new TypeError(`path ${path} ${problem}`);
  const keys = segments(path);
  let current = target;
  for (const key of keys.slice(0, -1)) {
    const next = Object.hasOwn(current, key) ? current[key] : undefined;
    if (next === null || typeof next !== "object") defineOwn(current, key, {});
    current = current[key] as Record<string, unknown>;
  }
  defineOwn(current, keys[keys.length - 1] as string, value);
}

/** Removes `path` from `target` and returns what was there. */
export function takeAt(target: Record<string, unknown>, path: FieldPath): unknown {
  const keys = segments(path);
  const holder = keys.length === 1 ? target : valueAt(target, keys.slice(0, -1).join("."));
  if (holder === null || typeof holder !== "object") return undefined;
  const last = keys[keys.length - 1] as string;
  const value = (holder as Record<string, unknown>)[last];
  delete (holder as Record<string, unknown>)[last];
  return value;
}
