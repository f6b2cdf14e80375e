/** What a command prints: `value` as one JSON line with --json, else the line `text` gives. */
export function printValue(value: unknown, json: boolean, text: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${text()}\n`);
}

/**
 * A list a command prints: one line an item (its JSON with --json, else `line`), then, unless
 * --json, how many on stderr (`noun` names them).
 */
export function printList<T>(
  list: readonly T[],
  json: boolean,
  line: (item: T) => string,
  noun: string,
): void {
  for (const item of list) printValue(item, json, () => line(item));
  if (!json) process.stderr.write(`${list.length} ${noun}\n`);
}
