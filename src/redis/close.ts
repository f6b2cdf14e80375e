import type { RedisConnection } from "./connection.js";

/**
 * Closes a connection: QUIT lets the commands already sent finish; when Redis does not answer
 * (the connection is down), the connection is dropped instead, so a close never hangs or throws.
 */
export async function closeRedis(connection: RedisConnection): Promise<void> {
  await connection.quit().catch(() => connection.disconnect());
}
