/**
 * The `code` an error carries (Node's system errors, csv-parse, fastify and our own classes
 * all set one), when it is a string; undefined for anything else, `null` included.
 */
export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === "string" ? code : undefined;
}
