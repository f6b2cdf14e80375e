// The console's only way to the API: every call carries the bearer token kept in this browser
// tab's session storage (never in a URL or a cookie), and every error keeps the API's shape.

const TOKEN = "moneyq.token";

export const session = {
  get token() {
    return sessionStorage.getItem(TOKEN);
  },
  signIn(token) {
    sessionStorage.setItem(TOKEN, token);
  },
  signOut() {
    sessionStorage.removeItem(TOKEN);
  },
};

/** An API refusal: `{ error: { code, message, details?, rows? } }` and the HTTP status. */
export class ApiError extends Error {
  constructor(status, error) {
    super(error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = error?.code ?? "http_error";
    this.details = error?.details ?? [];
    this.rows = error?.rows ?? [];
  }
}

function urlOf(path, query = {}) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query))
    if (value !== undefined && value !== "") params.set(name, String(value));
  const search = params.toString();
  return search ? `${path}?${search}` : path;
}

/**
 * @typedef {object} CallOptions
 * @property {Record<string, unknown>} [query] query parameters; empty ones are left out
 * @property {unknown} [json] a JSON body
 * @property {string} [text] a body of `contentType`
 * @property {string} [contentType]
 * @property {string} [accept]
 */

/** @param {string} method @param {string} path @param {CallOptions} [options] */
async function send(method, path, { query, json, text, contentType, accept } = {}) {
  const headers = { authorization: `Bearer ${session.token ?? ""}` };
  if (accept) headers.accept = accept;
  let body;
  if (json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(json);
  } else if (text !== undefined) {
    headers["content-type"] = contentType;
    body = text;
  }
  const response = await fetch(urlOf(path, query), { method, headers, body, cache: "no-store" });
  if (response.ok) return response;
  const answer = await response.json().catch(() => undefined);
  throw new ApiError(response.status, answer?.error);
}

/** Calls the API and answers its JSON. @param {CallOptions} [options] */
export async function api(method, path, options) {
  const response = await send(method, path, options);
  return response.status === 204 ? undefined : response.json();
}

/** Calls the API and answers its body as text (JSON lines, CSV). @param {CallOptions} [options] */
export async function apiText(method, path, options) {
  return (await send(method, path, options)).text();
}

/** Saves what the API answers as a file, under the name the API gives it. */
export async function download(path, query) {
  const response = await send("GET", path, { query });
  const disposition = response.headers.get("content-disposition") ?? "";
  const name = /filename="([^"]+)"/.exec(disposition)?.[1] ?? "download";
  const url = URL.createObjectURL(await response.blob());
  const link = Object.assign(document.createElement("a"), { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
