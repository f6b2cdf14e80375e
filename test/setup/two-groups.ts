import type { TestProjectInlineConfiguration } from "vitest/config";

/** One group of test files: its project's name, the files it runs and those it leaves out. */
export interface FileGroup {
  readonly name: string;
  readonly include: string[];
  readonly exclude?: string[];
}

/**
 * A suite as two vitest projects run one after the other: first `together`, the files that
 * assert only values, orders and counts, two at a time; then `alone`, one file at a time, the
 * files another file competing for the two cores would distort (rates in a sliding second,
 * latencies, short locks, the shared Redis's settings: docs/development.md).
 */
export function twoGroups(together: FileGroup, alone: FileGroup): TestProjectInlineConfiguration[] {
  const project = (group: FileGroup, maxWorkers: number, groupOrder: number) => ({
    extends: true,
    test: {
      name: group.name,
      include: group.include,
      ...(group.exclude && { exclude: group.exclude }),
      maxWorkers,
      sequence: { groupOrder },
    },
  });
  return [project(together, 2, 0), project(alone, 1, 1)];
}
