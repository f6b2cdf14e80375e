import { readFileSync } from "node:fs";
import { errorCode } from "../contract/error-code.js";
import { type ParsedProfile, parseProviderProfile } from "./profile.js";

/** Reads and validates a provider profile file (JSON). Issues name the field and the rule. */
export function loadProviderProfile(file: string): ParsedProfile {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const code = errorCode(error) ?? "unreadable";
    return { success: false, issues: [{ field: "", rule: `cannot read the file (${code})` }] };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { success: false, issues: [{ field: "", rule: "must be a JSON document" }] };
  }
  return parseProviderProfile(json);
}
