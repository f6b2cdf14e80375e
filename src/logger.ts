import { type DestinationStream, type Logger, pino } from "pino";
import type { LogLevel } from "./config/load-config.js";

export type { Logger };

/** Paths pino censors wherever they appear in a log line. */
export const REDACTED_PATHS = [
  "apiKey",
  "*.apiKey",
  "*.*.apiKey",
  "secret",
  "*.secret",
  'headers["x-api-key"]',
  '*.headers["x-api-key"]',
  "authorization",
  "*.authorization",
];

export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: "moneyq" },
    redact: { paths: REDACTED_PATHS, censor: "[REDACTED]" },
  };
  return destination ? pino(options, destination) : pino(options);
}
