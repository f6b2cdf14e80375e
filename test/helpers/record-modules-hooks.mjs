// The loader hooks of record-modules.mjs: each resolved ES module's URL, appended as it comes.
import { appendFileSync } from "node:fs";

let file;

export function initialize(data) {
  file = data.file;
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  appendFileSync(file, `esm ${resolved.url}\n`);
  return resolved;
}
