import { EXIT } from "./exit-codes.js";

/** A command that cannot do what was asked: its message goes to stderr, then it exits. */
export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number = EXIT.usage) {
    super(message);
    this.name = "CliError";
    this.exitCode = exitCode;
  }
}
