import type { RedisConnection } from "../connection.js";

/** A Lua script, run as the defined command `name`; without `numberOfKeys` the caller passes it. */
export interface Script {
  readonly name: string;
  readonly numberOfKeys?: number;
  readonly lua: string;
}

/**
 * Defines each script on the connection, once. A defined command runs by SHA: the script's text
 * is not sent with every call.
 */
export function defineScripts(redis: RedisConnection, ...scripts: readonly Script[]): void {
  for (const { name, numberOfKeys, lua } of scripts) {
    if (name in redis) continue;
    redis.defineCommand(name, numberOfKeys === undefined ? { lua } : { numberOfKeys, lua });
  }
}
