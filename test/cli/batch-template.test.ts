import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BATCH_KIND_NAMES, BATCH_KINDS, type BatchKind } from "../../src/batches/batch-kinds.js";
import { csvQuoted } from "../../src/batches/csv-quote.js";
import { fileRows } from "../../src/cli/file-rows.js";
import { loadConfig } from "../../src/config/load-config.js";
import { openParts, type SharedParts } from "../../src/service/open-parts.js";
import { runCli } from "../helpers/cli.js";
import { useTestRedis } from "../helpers/redis.js";

const redis = useTestRedis("template");
let parts: SharedParts;
let dir = "";
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "moneyq-template-"));
  // The parts `moneyq batch submit` acts through, on this file's Redis and the default profile.
  const config = loadConfig({ REDIS_URL: redis.url, MONEYQ_REDIS_PREFIX: redis.prefix });
  parts = openParts(config, redis.connect());
});
afterAll(async () => {
  await parts.close();
  await rm(dir, { recursive: true, force: true });
});

const printed = new Map<BatchKind, Promise<string>>();

/** The template of `kind` as `moneyq batch template --kind KIND` prints it (one run per kind). */
function template(kind: BatchKind): Promise<string> {
  let text = printed.get(kind);
  if (text === undefined) {
    text = runCli(["batch", "template", "--kind", kind]).then((result) => {
      expect(result).toMatchObject({ code: 0, stderr: "" });
      return result.stdout;
    });
    printed.set(kind, text);
  }
  return text;
}

/** The lines of `text`, and where its header is: the first line that is not a note. */
function split(text: string): { lines: string[]; header: number } {
  const lines = text.split("\n");
  return { lines, header: lines.findIndex((line) => !line.startsWith("#")) };
}

/** `text` with the # of its example row (the line after the header) removed, as a user would. */
function uncommented(text: string): string {
  const { lines, header } = split(text);
  const example = lines[header + 1] as string;
  expect(example.startsWith("# ")).toBe(true);
  lines[header + 1] = example.slice(2);
  return lines.join("\n");
}

/** `text` (a header and rows, no notes) without its column `name`. */
function without(text: string, name: string): string {
  const table: string[][] = parse(text);
  const at = (table[0] as string[]).indexOf(name);
  expect(at).toBeGreaterThanOrEqual(0);
  return table
    .map((cells) =>
      cells
        .filter((_, i) => i !== at)
        .map(csvQuoted)
        .join(","),
    )
    .join("\n");
}

let files = 0;

/** What `moneyq batch submit FILE --kind KIND --dry-run` makes of `csv`: its reader and checks. */
async function dryRun(kind: BatchKind, csv: string) {
  files += 1;
  const path = join(dir, `${kind}-${files}.csv`);
  await writeFile(path, csv);
  return parts.batches.submit({
    account: parts.accounts[0] as string,
    kind,
    source: await fileRows(path, kind),
    dryRun: true,
  });
}

// Each kind's template comes from a CLI process of its own: seconds apiece on a busy machine.
describe("moneyq batch template", { timeout: 60_000 }, () => {
  it.each(BATCH_KIND_NAMES)(
    "%s: notes, the header, then the example row commented out",
    async (kind) => {
      const { lines, header } = split(await template(kind));
      expect(header).toBeGreaterThan(0);
      expect(lines.slice(0, header).join("\n")).toContain(`--kind ${kind}`);
      expect(lines.slice(0, header).join("\n")).toContain("Remove the # of the example row");
      expect(lines[header]).toBe(BATCH_KINDS[kind].columns.map((c) => c.name).join(","));
      expect(lines[header + 1]).toMatch(/^# ./);
      expect(lines.slice(header + 2)).toEqual([""]);
    },
  );

  it.each(BATCH_KIND_NAMES)(
    "%s: with the example row uncommented, the file is one valid row, every column filled, its notes skipped",
    async (kind) => {
      const csv = uncommented(await template(kind));
      // The notes stay above the header: read as notes, not rows.
      expect(split(csv).header).toBeGreaterThan(0);
      const report = await dryRun(kind, csv);
      expect(report.issues).toEqual([]);
      expect(report).toMatchObject({ rows: 1, accepted: 1, invalid: 0, duplicates: 0 });
      // Filled optional columns too: a provider profile may require them (the default does some).
      const [, example] = parse(csv, { comment: "#", comment_no_infix: true }) as string[][];
      expect(example?.filter((cell) => cell === "")).toEqual([]);
    },
  );

  it.each(BATCH_KIND_NAMES)(
    "%s: as printed, the file is refused, naming the example row's line (a # line below the header)",
    async (kind) => {
      const text = await template(kind);
      const line = split(text).header + 2;
      await expect(dryRun(kind, text)).rejects.toMatchObject({
        code: "commented_line",
        problems: [expect.stringMatching(new RegExp(`^line ${line}: starts with # `))],
      });
    },
  );

  it.each(BATCH_KIND_NAMES)(
    "%s: the same checks refuse the uncommented template without any one required column",
    async (kind) => {
      const { lines, header } = split(uncommented(await template(kind)));
      const table = lines.slice(header).join("\n");
      for (const column of BATCH_KINDS[kind].columns.filter((c) => c.required))
        await expect(dryRun(kind, without(table, column.name)), column.name).rejects.toMatchObject({
          code: "invalid_header",
          problems: [`${column.name}: required column missing`],
        });
    },
  );

  it("as a user runs it: `batch submit --dry-run` names the example's line as printed, then takes the example", async () => {
    const text = await template("payout.bank");
    const submit = async (csv: string) => {
      files += 1;
      const path = join(dir, `as-user-${files}.csv`);
      await writeFile(path, csv);
      return runCli(["batch", "submit", path, "--kind", "payout.bank", "--dry-run"], {
        REDIS_URL: redis.url,
        MONEYQ_REDIS_PREFIX: redis.prefix,
      });
    };
    const printedAsIs = await submit(text);
    expect(printedAsIs.code).toBe(2);
    const line = split(text).header + 2;
    expect(printedAsIs.stderr).toBe(
      "moneyq: cannot read the batch file (commented_line):\n" +
        `  line ${line}: starts with # (a note or the template's example row): delete the line ` +
        'or remove the #; write a value that starts with # in quotes ("#1042")\n',
    );
    const filled = await submit(uncommented(text));
    expect(filled.code).toBe(0);
    expect(filled.stdout).toContain("rows 1, accepted 1, invalid 0, duplicates 0");
  });

  it("refuses an unknown --kind (exit 2), naming the option and every kind", async () => {
    const result = await runCli(["batch", "template", "--kind", "payout.cheque"]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("option '--kind <kind>' argument 'payout.cheque' is invalid");
    for (const kind of BATCH_KIND_NAMES) expect(result.stderr).toContain(kind);
  });

  it("refuses a missing --kind (exit 2)", async () => {
    const result = await runCli(["batch", "template"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("required option '--kind <kind>' not specified");
  });
});
