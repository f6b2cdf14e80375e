import { findOnPath } from "../../src/redis/private-redis.js";

/** The path of `name` on PATH, or an error naming the Debian package (.ci/run installs each). */
export function installed(name: string, debianPackage: string): string {
  const binary = findOnPath(name, process.env.PATH);
  if (!binary)
    throw new Error(
      `${name} is not installed: apt-get install ${debianPackage} (.ci/run installs it)`,
    );
  return binary;
}
