import { InvalidArgumentError } from "commander";

/** A commander parser for a whole number in [min, max], whose error names the rule. */
export function intOption(min: number, max: number) {
  return (value: string): number => {
    if (!/^\d+$/.test(value))
      throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}`);
    const n = Number(value);
    if (n < min || n > max)
      throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}`);
    return n;
  };
}
