import { describe, expect, it } from "vitest";
import { PaymentsClient } from "../../src/client/index.js";
import {
  OPERATION_IDS,
  type OperationSpec,
  operations,
  pathParamNames,
  validate,
} from "../../src/contract/index.js";
import { coveredOperations } from "../fixtures/limit-cases.js";
import { operationExamples } from "../fixtures/operation-examples.js";

/** What a server sees: every query value as text. */
function asQueryStrings(query: Record<string, unknown> | undefined) {
  return Object.fromEntries(Object.entries(query ?? {}).map(([k, v]) => [k, String(v)]));
}

describe("operation table", () => {
  it("lists the 19 operations of spec sections 4.1 to 4.19, in order", () => {
    expect(OPERATION_IDS).toHaveLength(19);
    expect(OPERATION_IDS.map((id) => operations[id].section)).toEqual(
      Array.from({ length: 19 }, (_, i) => `4.${i + 1}`),
    );
  });

  it("marks exactly the spec's IDEM operations as idempotent", () => {
    const idem = OPERATION_IDS.filter((id) => operations[id].idempotent).map(
      (id) => operations[id].section,
    );
    expect(idem).toEqual(["4.1", "4.2", "4.3", "4.4", "4.18", "4.19"]);
  });

  it("gives every operation a client method", () => {
    const missing = OPERATION_IDS.filter(
      (id) =>
        typeof (PaymentsClient.prototype as unknown as Record<string, unknown>)[id] !== "function",
    );
    expect(missing).toEqual([]);
  });

  it("gives every operation with input a boundary case in the contract tests", () => {
    const withInput = OPERATION_IDS.filter((id) => {
      const op: OperationSpec = operations[id];
      return op.params || op.query || op.body;
    });
    expect(withInput.filter((id) => !coveredOperations.has(id))).toEqual([]);
  });

  it("declares a params schema exactly for paths with {parameters}", () => {
    for (const id of OPERATION_IDS) {
      const op: OperationSpec = operations[id];
      const names = pathParamNames(op.path);
      expect(names.length > 0, id).toBe(op.params !== undefined);
    }
  });

  it.each(OPERATION_IDS)("accepts the valid example of %s", (id) => {
    const op: OperationSpec = operations[id];
    const example = operationExamples[id] as {
      params?: unknown;
      query?: Record<string, unknown>;
      body?: unknown;
    };
    if (op.params) expect(validate(op.params, example.params)).toMatchObject({ success: true });
    if (op.query) {
      expect(validate(op.query, asQueryStrings(example.query))).toMatchObject({ success: true });
    }
    if (op.body) expect(validate(op.body, example.body)).toMatchObject({ success: true });
  });
});
