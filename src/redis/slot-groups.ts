import type { Keyspace } from "./keys.js";

/** Some of a list's items, with their places in it. */
export interface SlotGroup<T> {
  readonly indexes: readonly number[];
  readonly items: readonly T[];
}

/**
 * Splits `items` into the groups one script call or multi-key command may take: all of them on
 * a single Redis, one group per account on a cluster (an account's keys share a slot, two
 * accounts' may not). Items keep their order within a group.
 */
export function slotGroups<T>(
  space: Keyspace,
  items: readonly T[],
  accountOf: (item: T) => string,
): SlotGroup<T>[] {
  if (!space.cluster) return items.length === 0 ? [] : [{ indexes: items.map((_, i) => i), items }];
  const groups = new Map<string, { indexes: number[]; items: T[] }>();
  items.forEach((item, i) => {
    const account = accountOf(item);
    let group = groups.get(account);
    if (!group) {
      group = { indexes: [], items: [] };
      groups.set(account, group);
    }
    group.indexes.push(i);
    group.items.push(item);
  });
  return [...groups.values()];
}

/** Runs `call` on each group at once and puts its answers back in the items' order. */
export async function perSlotGroup<T, A>(
  space: Keyspace,
  items: readonly T[],
  accountOf: (item: T) => string,
  call: (group: readonly T[]) => Promise<readonly A[]>,
): Promise<A[]> {
  const answers: A[] = new Array(items.length);
  await Promise.all(
    slotGroups(space, items, accountOf).map(async (group) => {
      const got = await call(group.items);
      group.indexes.forEach((index, n) => {
        answers[index] = got[n] as A;
      });
    }),
  );
  return answers;
}
