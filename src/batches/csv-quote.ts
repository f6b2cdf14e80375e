/** RFC 4180: a cell with a comma, quote or line break is quoted, its quotes doubled. */
export function csvQuoted(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
