import { isClusterUrl, parseClusterUrl } from "../net/redis-url.js";

/**
 * Hides the user and password of a URL (redis://, http(s)://). A URL that does not parse keeps
 * only its scheme: an unencoded `#`, `?` or `/` in a password makes it unreadable, and then no
 * one can tell where the password ends. Otherwise everything from `//` to the last `@` is hidden,
 * so a password holding `@`, `:` or `/` is hidden whole (an `@` in the path or query hides more
 * than needed, never less).
 */
export function redactUrl(url: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0] ?? "";
  // A cluster's seed list (`h1:p1,h2:p2`) is no URL host, but reads the same way.
  const readable = isClusterUrl(url) ? typeof parseClusterUrl(url) !== "string" : URL.canParse(url);
  if (!readable) return `${scheme} (unreadable URL, hidden)`.trim();
  const start = url.indexOf("//");
  const at = url.lastIndexOf("@");
  if (start === -1 || at < start) return url;
  return `${url.slice(0, start + 2)}***${url.slice(at)}`;
}
