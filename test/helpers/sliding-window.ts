/** The most of `times` (ms, any order) that fall inside one sliding second: [t, t + 1000). */
export function maxInAnySecond(times: readonly number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i += 1) {
    while ((sorted[i] as number) - (sorted[j] as number) >= 1000) j += 1;
    most = Math.max(most, i - j + 1);
  }
  return most;
}
