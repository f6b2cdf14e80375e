// Upload a batch file: a dry run shows every bad row before anything is enqueued; then submit,
// submit the valid rows only, or schedule.
import { ApiError, api } from "../api.js";
import { errorBox, fill, h, table } from "../dom.js";
import { accountSelect, field, repeatsSection } from "./parts.js";

/** The batch kinds, as the API's own OpenAPI document lists them. */
async function batchKinds() {
  const doc = await (await fetch("/openapi.json", { cache: "no-store" })).json();
  const body = doc.paths["/v1/batches"].post.requestBody.content["application/json"].schema;
  return body.properties.kind.enum;
}

export async function uploadView(main, ctx) {
  const kind = h(
    "select",
    { id: "kind", name: "kind" },
    (await batchKinds()).map((k) => h("option", { value: k }, k)),
  );
  const account = accountSelect(ctx.me);
  const file = h("input", {
    type: "file",
    id: "file",
    name: "file",
    accept: ".csv,.json,text/csv,application/json",
  });
  const notBefore = h("input", { type: "datetime-local", id: "not-before", name: "notBefore" });
  const outcome = h("div", { id: "outcome" });
  const actions = h("div", { class: "actions" });
  const form = h(
    "form",
    { id: "upload" },
    h(
      "div",
      { class: "filters" },
      field("Kind", kind),
      field("Account", account),
      field("File (CSV or JSON)", file),
    ),
    h("button", { type: "submit" }, "Check file (dry run)"),
  );
  const options = () => ({ kind: kind.value, account: account.value, file: file.files[0] });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    fill(actions);
    await run(outcome, async () => {
      const report = await submit(options(), { dryRun: true });
      fill(outcome, dryRunReport(report));
      fill(actions, submitButtons(report, options, notBefore, outcome));
    });
  });
  fill(main, h("h1", {}, "Upload a batch"), form, outcome, actions);
}

/** Runs `step`, showing the API's error (its message, fields and bad rows) if it throws. */
async function run(outcome, step) {
  try {
    await step();
  } catch (error) {
    fill(outcome, errorBox(error), error.rows?.length > 0 && issueTable(error.rows));
  }
}

function dryRunReport(report) {
  const summary = `${report.rows} rows: ${report.accepted} valid, ${report.invalid} invalid, ${report.duplicates} duplicates.`;
  return [
    h("h2", {}, "Dry run"),
    h(
      "p",
      { id: "dry-run-summary" },
      summary,
      report.issues.length === 0 && " Nothing was enqueued yet.",
    ),
    report.issues.length > 0 && issueTable(report.issues),
    repeatsSection(report.repeats),
    fundsSection(report.funds),
  ];
}

const FUNDS_STATE = {
  enough: "enough (verified: read from the provider's balance)",
  short: "short (verified: read from the provider's balance)",
  not_verified: "not verified",
};

/** A stable batch's needs against each sub-account's balance at the provider; nothing otherwise. */
function fundsSection(funds) {
  if (!funds || funds.lines.length === 0) return false;
  return [
    h("h2", {}, "Funds"),
    h(
      "p",
      { id: "funds-summary", class: funds.state === "enough" ? "" : "warning" },
      `What the rows send against the balance the provider reports: ${FUNDS_STATE[funds.state]}. The provider's fees are not counted.`,
    ),
    table(
      [
        ["Sub-account", (l) => l.subAccountId],
        ["Currency", (l) => `${l.currency || "?"} on ${l.network || "?"}`],
        ["Rows", (l) => String(l.rows)],
        ["Needed", (l) => l.needed],
        ["Available", (l) => l.available ?? "?"],
        [
          "Check",
          (l) =>
            l.state === "short"
              ? `short by ${l.short}`
              : l.state === "enough"
                ? "enough"
                : `not verified: ${l.why}`,
        ],
      ],
      funds.lines,
      { class: "funds", id: "funds" },
    ),
  ];
}

function issueTable(issues) {
  return table(
    [
      ["Row", (i) => String(i.row)],
      ["Reference", (i) => i.reference ?? "–"],
      ["Column", (i) => h("code", {}, i.column || "(row)")],
      ["Rule", (i) => i.rule],
      ["Problem", (i) => i.type],
    ],
    issues,
    { class: "issues", id: "issues" },
  );
}

function submitButtons(report, options, notBefore, outcome) {
  const go = (extra) => () =>
    run(outcome, async () => {
      const done = await submit(options(), extra);
      location.hash = `#/batch/${encodeURIComponent(done.status.account)}/${encodeURIComponent(done.batchId)}`;
    });
  const schedule = () => {
    if (!notBefore.value) {
      fill(
        outcome,
        errorBox({
          message: "notBefore: choose when the batch may start",
          details: [{ field: "notBefore", rule: "required to schedule" }],
        }),
      );
      return;
    }
    go({ notBefore: new Date(notBefore.value).toISOString() })();
  };
  return [
    report.issues.length === 0 &&
      h("button", { type: "button", id: "submit", onclick: go({}) }, "Submit"),
    report.issues.length > 0 &&
      report.accepted > 0 &&
      h(
        "button",
        { type: "button", id: "submit-partial", onclick: go({ allowPartial: true }) },
        `Submit the ${report.accepted} valid rows`,
      ),
    report.accepted > 0 && [
      field("Not before", notBefore),
      h("button", { type: "button", id: "schedule", onclick: schedule }, "Schedule"),
    ],
  ];
}

/** Sends the file: a CSV as it is, a JSON file's rows in a JSON body. */
async function submit({ kind, account, file }, flags) {
  if (!file)
    throw new ApiError(400, {
      code: "invalid_request",
      message: "file: choose a file",
      details: [{ field: "file", rule: "required" }],
    });
  const text = await file.text();
  const isJson = file.name.toLowerCase().endsWith(".json") || file.type === "application/json";
  if (!isJson)
    return api("POST", "/v1/batches", {
      query: { kind, account, ...flags },
      text,
      contentType: "text/csv",
    });
  let rows;
  try {
    const parsed = JSON.parse(text);
    rows = Array.isArray(parsed) ? parsed : parsed.rows;
  } catch {
    rows = undefined;
  }
  if (!Array.isArray(rows))
    throw new ApiError(400, {
      code: "invalid_file",
      message: "file: not a JSON array of rows (or an object with rows)",
      details: [{ field: "file", rule: 'a JSON array of rows, or { "rows": [...] }' }],
    });
  return api("POST", "/v1/batches", { json: { kind, account, rows, ...flags } });
}
