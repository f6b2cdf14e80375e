import { Transform, type TransformCallback } from "node:stream";

const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const HASH = 0x23;
const SPACE = 0x20;
const TAB = 0x09;
const BOM = [0xef, 0xbb, 0xbf];

/**
 * Where the scan is: at the start of a line (spaces and a BOM aside), in a note before the
 * header, in a line outside or inside a quoted cell, or stopped at a # line after the header.
 */
type Mode = "lineStart" | "note" | "line" | "quoted" | "stopped";

/**
 * The # lines of a CSV batch file, between the bytes and the parser. A line starting with # before
 * the header is a note: its text is left out, its line break kept so that the parser's line
 * numbers stay the file's. A line starting with # after the header may be a row whose first cell
 * is `#1042` or an example row left commented out, so it is never skipped: the text stops before
 * it (the parser still reports problems of the lines above) and `hashLine` names it. The rest of
 * the input is still read, for the digest and for an upload to be consumed.
 *
 * Quotes are followed as the parser reads them (RFC 4180, `""` inside a quoted cell), so that a
 * line break inside a quoted cell does not start a line. In a file where they differ, the parser
 * refuses a quote earlier in the file.
 */
export class CsvNoteLines extends Transform {
  /** The line (from 1) of the first line after the header that starts with #. */
  hashLine: number | undefined;
  #mode: Mode = "lineStart";
  #header = false;
  #line = 1;
  #afterCr = false;
  #offset = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let from = 0;
    for (let i = 0; i < chunk.length && this.#mode !== "stopped"; i += 1) {
      const before = this.#mode;
      this.#mode = this.#next(before, chunk[i] as number, this.#offset + i);
      const began = this.#mode === "stopped" || (this.#mode === "note" && before !== "note");
      // What came before a note or a # line is passed on; they are not. A note's line break is.
      if (began && i > from) this.push(chunk.subarray(from, i));
      else if (before === "note" && this.#mode !== "note") from = i;
    }
    if (this.#mode !== "note" && this.#mode !== "stopped" && from < chunk.length)
      this.push(from === 0 ? chunk : chunk.subarray(from));
    this.#offset += chunk.length;
    done();
  }

  /** The mode after `byte`, at `offset` in the file. */
  #next(mode: Mode, byte: number, offset: number): Mode {
    if (byte === LF || byte === CR) {
      // CR LF is one line break; a lone CR or LF is one too.
      if (!(byte === LF && this.#afterCr)) this.#line += 1;
      this.#afterCr = byte === CR;
      // A line break inside a quoted cell is the cell's text, not the start of a line.
      return mode === "quoted" ? mode : "lineStart";
    }
    this.#afterCr = false;
    switch (mode) {
      case "lineStart":
        if (byte === SPACE || byte === TAB || (offset < 3 && byte === BOM[offset])) return mode;
        if (byte === HASH && this.#header) {
          this.hashLine = this.#line;
          return "stopped";
        }
        if (byte === HASH) return "note";
        this.#header = true;
        return byte === QUOTE ? "quoted" : "line";
      case "line":
        return byte === QUOTE ? "quoted" : mode;
      case "quoted":
        // A closing quote; the first of an escaped "" reopens at once on the second.
        return byte === QUOTE ? "line" : mode;
      default:
        return mode;
    }
  }
}
