import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { MoneyqError } from "../errors/moneyq-error.js";
import { ADAPTER_FUNCTIONS, type ProviderAdapter } from "./adapter.js";

/** Why an adapter module cannot be used: the refusal names the variable and this rule. */
export class AdapterLoadError extends MoneyqError {
  readonly code = "adapter_unloadable";
  constructor(readonly rule: string) {
    super(rule);
  }
}

/**
 * Imports the ES module at `file` (MONEYQ_PROVIDER_ADAPTER) and takes its adapter functions:
 * from its default export when that is an object, else from its named exports. A name of
 * ADAPTER_FUNCTIONS that is there must be a function, and at least one must be.
 */
export async function loadProviderAdapter(file: string): Promise<ProviderAdapter> {
  const url = pathToFileURL(isAbsolute(file) ? file : resolve(file)).href;
  let module: Record<string, unknown>;
  try {
    module = (await import(url)) as Record<string, unknown>;
  } catch (error) {
    const why = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw new AdapterLoadError(`the module could not be loaded: ${why}`);
  }
  const source =
    module.default !== null && typeof module.default === "object"
      ? (module.default as Record<string, unknown>)
      : module;
  const adapter: Record<string, unknown> = {};
  for (const name of ADAPTER_FUNCTIONS) {
    const value = source[name];
    if (value === undefined) continue;
    if (typeof value !== "function") throw new AdapterLoadError(`${name} must be a function`);
    adapter[name] = value;
  }
  if (Object.keys(adapter).length === 0)
    throw new AdapterLoadError(`the module exports none of ${ADAPTER_FUNCTIONS.join(", ")}`);
  return Object.freeze(adapter) as ProviderAdapter;
}
