import { expect } from "vitest";
import { ConfigError, type ConfigIssue, loadConfig } from "../../src/config/load-config.js";

/** The issues loadConfig refuses `env` with; fails the test when it accepts it. */
export function issuesOf(env: Record<string, string>): ConfigIssue[] {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return [...(error as ConfigError).issues];
  }
  throw new Error("expected ConfigError");
}
