import type { RedisConnection } from "../connection.js";
import * as scripts from "./lua-scripts.js";
import { defineScripts, type Script } from "./script.js";

const CATALOGUE: readonly Script[] = Object.values(scripts);

const defined = new WeakSet<RedisConnection>();

/**
 * Defines every script of the catalogue on `redis`, once a connection: whatever part runs on a
 * connection finds each script there, and no part defines its own.
 */
export function defineCatalogue(redis: RedisConnection): void {
  if (defined.has(redis)) return;
  defineScripts(redis, ...CATALOGUE);
  defined.add(redis);
}
