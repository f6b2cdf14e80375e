import type { RedisConnection } from "../redis/connection.js";
import { batchKeys, keyspace, legacyBatchKeys } from "../redis/keys.js";
import { defineCatalogue } from "../redis/scripts/catalogue.js";

type MigratingRedis = RedisConnection & {
  moneyqMoveLegacyBatch(
    oldMeta: string,
    oldRows: string,
    newMeta: string,
    newRows: string,
    account: string,
  ): Promise<string>;
};

export interface LegacyBatchMigration {
  /** Batches moved to their account's keys by this call. */
  readonly moved: number;
  /** Ids left in place because their account already had a batch of that id. */
  readonly conflicts: readonly string[];
}

/**
 * Moves every batch written before batches belonged to their account to its account's keys
 * (the account its meta names), so that its status, report, cancel and a resubmission of its
 * file find it, and jobs still in flight update it. Run at each start of the service and of the
 * CLI's operator: idempotent (a moved batch has no old key left), and each batch moves in one
 * script, so several processes starting at once move each batch exactly once. The batch's id,
 * its jobs' idempotency keys and its reference claims are unchanged.
 */
export async function migrateLegacyBatchKeys(
  connection: RedisConnection,
  prefix: string,
): Promise<LegacyBatchMigration> {
  // A cluster never ran the release that wrote them (and the move spans two slots).
  if (connection.isCluster) return { moved: 0, conflicts: [] };
  defineCatalogue(connection);
  const redis = connection as MigratingRedis;
  const namespace = legacyBatchKeys.namespace(prefix);
  let moved = 0;
  const conflicts: string[] = [];
  let cursor = "0";
  do {
    const [next, found] = await redis.scan(cursor, "MATCH", `${namespace}*`, "COUNT", 1000);
    cursor = next;
    // An old meta is `<prefix>:batch:<id>`, and an id has no ':'; every newer key has one more
    // segment (the account), and so does an old rows key.
    const ids = found.map((key) => key.slice(namespace.length)).filter((id) => !id.includes(":"));
    for (const id of ids) {
      const oldMeta = legacyBatchKeys.meta(prefix, id);
      const [metaId, account] = await redis.hmget(oldMeta, "id", "account");
      if (metaId !== id || !account) continue;
      const keys = batchKeys(keyspace(prefix), account, id);
      const outcome = await redis.moneyqMoveLegacyBatch(
        oldMeta,
        legacyBatchKeys.rows(prefix, id),
        keys.meta,
        keys.rows,
        account,
      );
      if (outcome === "moved") moved += 1;
      else if (outcome === "conflict") conflicts.push(id);
    }
  } while (cursor !== "0");
  return { moved, conflicts };
}
