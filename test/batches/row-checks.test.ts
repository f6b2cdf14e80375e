import { describe, expect, it } from "vitest";
import type { RowIssue } from "../../src/batches/batch-errors.js";
import type { Held } from "../../src/batches/batch-parts.js";
import { HeldRows } from "../../src/batches/held-rows.js";
import { type HeldCheck, runHeldChecks } from "../../src/batches/row-checks.js";

function heldOf(count: number): Held {
  const held: Held = new HeldRows();
  // Rows 2, 4, 6, ...: the read refused the odd ones.
  for (let i = 0; i < count; i += 1)
    held.add(2 * (i + 1), `ref-${i}`, { body: {} } as unknown as Parameters<Held["add"]>[2]);
  return held;
}

const issue = (held: Held, index: number, rule: string): RowIssue => ({
  type: "invalid",
  row: held.row(index),
  reference: held.reference(index),
  column: "reference",
  rule,
});

/** A check that refuses the rows `refuse` names among those it is given, and records them. */
function check(name: string, held: Held, refuse: readonly number[], seen: number[][]): HeldCheck {
  return {
    name,
    run: async (candidates) => {
      seen.push([...candidates]);
      return new Map(
        candidates.filter((i) => refuse.includes(i)).map((i) => [i, issue(held, i, name)]),
      );
    },
  };
}

describe("the held rows' checks", () => {
  it("run in their order, each over the rows no earlier one refused: a row has one issue", async () => {
    const held = heldOf(5);
    const seen: number[][] = [];
    const checks = [
      check("elsewhere", held, [1], seen),
      check("reuse", held, [1, 3], seen),
      check("repeat", held, [3, 4], seen),
    ];
    const read: RowIssue[] = [
      { type: "invalid", row: 3, reference: "x", column: "amount", rule: "required" },
    ];
    const { valid, issues } = await runHeldChecks(checks, held, read);
    expect(seen).toEqual([
      [0, 1, 2, 3, 4],
      [0, 2, 3, 4],
      [0, 2, 4],
    ]);
    expect(valid).toEqual([0, 2]);
    expect(issues.map((i) => [i.row, i.rule])).toEqual([
      [3, "required"],
      [4, "elsewhere"],
      [8, "reuse"],
      [10, "repeat"],
    ]);
  });
});
