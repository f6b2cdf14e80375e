import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { errorCode } from "./contract/error-code.js";

/**
 * The text of a regular file of at most `maxMiB` mebibytes, or the rule it breaks. Opened
 * without blocking, so that a named pipe or a device is refused rather than waited on.
 */
export function readBoundedFile(
  file: string,
  maxMiB: number,
): { readonly text: string } | { readonly rule: string } {
  let fd: number | undefined;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { rule: "must be the path of a regular file" };
    if (stat.size > maxMiB * 1024 * 1024)
      return { rule: `must be a file of at most ${maxMiB} MiB` };
    return { text: readFileSync(fd, "utf8") };
  } catch (error) {
    return { rule: `cannot read the file (${errorCode(error) ?? "unreadable"})` };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
