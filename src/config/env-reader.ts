// Reading one environment's variables, gathering every problem instead of stopping at the first.
import type { z } from "zod";
import { toFieldIssues } from "../contract/field-issues.js";
import { MoneyqError } from "../errors/moneyq-error.js";
import { CONFIG_DEFAULTS } from "./defaults.js";
import { flag, matching, positiveInt } from "./rules.js";

export interface ConfigIssue {
  readonly variable: string;
  readonly rule: string;
}

/** Start-up refused: names each variable and its rule, never a value. */
export class ConfigError extends MoneyqError {
  readonly code = "config_invalid";
  readonly issues: readonly ConfigIssue[];
  constructor(issues: readonly ConfigIssue[]) {
    super(`Invalid configuration:\n${issues.map((i) => `  ${i.variable}: ${i.rule}`).join("\n")}`);
    this.issues = issues;
  }
}

export type Env = Readonly<Record<string, string | undefined>>;

/** Reads variables of one environment, collecting every problem instead of stopping at the first. */
export class EnvReader {
  readonly env: Env;
  readonly issues: ConfigIssue[] = [];

  constructor(env: Env) {
    this.env = env;
  }

  /** The variable's value; unset and empty are the same. */
  text(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value === "" ? undefined : value;
  }

  /** The variable's value if `schema` accepts it; otherwise an issue per rule, and `fallback`. */
  check<T>(name: string, schema: z.ZodType<T>, fallback: T): T {
    const value = this.text(name);
    if (value === undefined) return fallback;
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    for (const i of toFieldIssues(parsed.error.issues, value))
      this.issues.push({ variable: name, rule: i.rule });
    return fallback;
  }

  int(name: keyof typeof CONFIG_DEFAULTS, schema = positiveInt): number {
    return Number(this.check(name, schema, String(CONFIG_DEFAULTS[name])));
  }

  isOn(name: string): boolean {
    return ["1", "true"].includes(this.check(name, flag, "0"));
  }

  host(name: "MONEYQ_API_HOST" | "MONEYQ_METRICS_HOST"): string {
    return this.check(
      name,
      matching(/^[A-Za-z0-9.:-]{1,255}$/, "must be a host name or IP address"),
      CONFIG_DEFAULTS[name],
    );
  }

  port(name: "MONEYQ_API_PORT" | "MONEYQ_METRICS_PORT"): number {
    return Number(
      this.check(
        name,
        matching(/^\d{1,5}$/, "must be a port number, 0 to 65535").refine(
          (v) => Number(v) <= 65_535,
          { message: "must be a port number, 0 to 65535" },
        ),
        String(CONFIG_DEFAULTS[name]),
      ),
    );
  }
}
