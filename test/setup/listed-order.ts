import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * A sequencer that runs files in the order `order` lists them (files it does not list after,
 * in vitest's own order). The scenarios that run two at a time are listed longest first, so
 * that a long one does not start last and run on alone: vitest's own order needs the durations
 * of an earlier run, which a clean clone has not.
 */
export function listedOrder(order: readonly string[]): typeof BaseSequencer {
  return class ListedOrder extends BaseSequencer {
    override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
      const sorted = await super.sort(files);
      const rank = (file: TestSpecification) => {
        const at = order.findIndex((path) => file.moduleId.endsWith(`/${path}`));
        return at < 0 ? order.length : at;
      };
      return sorted
        .map((file, i) => ({ file, i }))
        .sort((a, b) => rank(a.file) - rank(b.file) || a.i - b.i)
        .map(({ file }) => file);
    }
  };
}
