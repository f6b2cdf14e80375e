// One batch: live progress, totals, counts per result, approve or reject, cancel, the report,
// and the rows that did not succeed.
import { api, apiText, download } from "../api.js";
import { errorBox, fill, h, noticeBox, table, when } from "../dom.js";
import { progressBar, repeatsSection, stateBadge, totalsTable } from "./parts.js";

const POLL_MS = 1_000;
const ENDED = ["completed", "completed_with_failures", "cancelled"];
const CANCELLABLE = [
  "validating",
  "submission_failed",
  "awaiting_approval",
  "scheduled",
  "queued",
  "running",
];
const UNSUCCESSFUL = "failed,rejected,cancelled,needs_reconciliation,invalid,duplicate";
/** Rows not succeeded shown on the page; the report has them all. */
const SHOWN_ROWS = 500;
/** While a batch runs, its rows not succeeded are read again at most this often. */
const FAILURES_EVERY_MS = 10_000;

export async function batchView(main, ctx, [account, batchId]) {
  const path = `/v1/batches/${encodeURIComponent(batchId)}`;
  const message = h("div", { id: "message" });
  const body = h("div");
  fill(main, h("h1", {}, "Batch ", h("code", {}, batchId)), message, body);
  let timer;
  // The rows not succeeded are read again only when their count changed, and while the batch
  // runs not more than every FAILURES_EVERY_MS: a large batch's list is not re-read each second.
  let failures = { count: -1, at: 0, section: h("div") };
  const refresh = async () => {
    const status = await api("GET", path, { query: { account } });
    const count = status.finished - status.counts.succeeded + status.invalid + status.duplicates;
    const ended = ENDED.includes(status.state) && status.finished >= status.accepted;
    const due = ended || Date.now() - failures.at >= FAILURES_EVERY_MS;
    if (count !== failures.count && due)
      failures = { count, at: Date.now(), section: await failuresSection(path, account) };
    fill(
      body,
      overview(status),
      actions(ctx, status, path, account, message, refresh),
      failures.section,
    );
    if (ended) clearInterval(timer);
    return ended;
  };
  if (await refresh()) return;
  timer = setInterval(() => refresh().catch((error) => fill(message, errorBox(error))), POLL_MS);
  ctx.onLeave(() => clearInterval(timer));
}

function overview(status) {
  const facts = [
    ["Account", status.account],
    ["Kind", status.kind],
    ["State", stateBadge(status.state)],
    ["Progress", progressBar(status)],
    [
      "Rows",
      `${status.rows} in the file, ${status.accepted} accepted, ${status.invalid} invalid, ${status.duplicates} duplicates`,
    ],
    ["Submitted by", status.submittedBy ?? "–"],
    ["Created", when(status.createdAt)],
    ["Not before", when(status.notBefore)],
    ["Approval", approvalText(status.approval)],
    status.repeats && [
      "Repeated payments",
      `${status.repeats.count} rows (policy ${status.repeats.policy}): see below`,
    ],
    ["Started", when(status.startedAt)],
    ["Finished", when(status.finishedAt)],
    status.cancelledAt && ["Cancelled", `${when(status.cancelledAt)} (${status.cancelReason})`],
  ].filter(Boolean);
  return [
    h(
      "dl",
      { class: "facts", id: "facts" },
      facts.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]),
    ),
    h("h2", {}, "Results"),
    table(
      [
        ["Result", ([k]) => k.replaceAll("_", " ")],
        ["Rows", ([, n]) => String(n)],
      ],
      Object.entries(status.counts),
      { class: "counts", id: "counts" },
    ),
    h("h2", {}, "Totals"),
    totalsTable(status.totals),
    repeatsSection(status.repeats),
  ];
}

function approvalText(approval) {
  if (!approval) return "not needed";
  const by = approval.decidedBy ? ` by ${approval.decidedBy} at ${when(approval.decidedAt)}` : "";
  const expires =
    approval.state === "pending" && approval.expiresAt
      ? ` (expires ${when(approval.expiresAt)})`
      : "";
  return `${approval.state}${by}${expires}`;
}

function actions(ctx, status, path, account, message, refresh) {
  const act = (verb) => async () => {
    try {
      await api("POST", `${path}/${verb}`, { query: { account } });
      await refresh();
      fill(message, noticeBox(`Batch ${verb === "cancel" ? "cancelled" : `${verb}d`}.`));
    } catch (error) {
      fill(message, errorBox(error));
    }
  };
  const save = (format) => () =>
    download(`${path}/results`, { account, format }).catch((error) =>
      fill(message, errorBox(error)),
    );
  const decides =
    status.state === "awaiting_approval" &&
    ctx.can("approve") &&
    status.submittedBy !== ctx.me.name;
  return h(
    "div",
    { class: "actions", id: "batch-actions" },
    decides && h("button", { type: "button", id: "approve", onclick: act("approve") }, "Approve"),
    decides &&
      h(
        "button",
        { type: "button", id: "reject", class: "danger", onclick: act("reject") },
        "Reject",
      ),
    ctx.can("operate") &&
      CANCELLABLE.includes(status.state) &&
      h(
        "button",
        { type: "button", id: "cancel", class: "danger", onclick: act("cancel") },
        "Cancel batch",
      ),
    h(
      "button",
      { type: "button", id: "download-csv", onclick: save("csv") },
      "Download report (CSV)",
    ),
    h(
      "button",
      { type: "button", id: "download-jsonl", onclick: save("jsonl") },
      "Download report (JSON lines)",
    ),
  );
}

async function failuresSection(path, account) {
  const text = await apiText("GET", `${path}/results`, {
    query: { account, format: "jsonl", result: UNSUCCESSFUL },
  });
  const lines = text
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line));
  return h(
    "section",
    { id: "failures" },
    h("h2", {}, `Rows that did not succeed (${lines.length})`),
    lines.length === 0
      ? h("p", { class: "hint" }, "None so far.")
      : table(
          [
            ["Row", (l) => String(l.row)],
            ["Reference", (l) => l.reference ?? "–"],
            ["Result", (l) => l.result.replaceAll("_", " ")],
            ["Amount", (l) => (l.amount ? `${l.currency} ${l.amount}` : "–")],
            ["Reason", (l) => l.error ?? "–"],
          ],
          lines.slice(0, SHOWN_ROWS),
          { class: "failures" },
        ),
    lines.length > SHOWN_ROWS &&
      h("p", { class: "hint" }, `The first ${SHOWN_ROWS} shown; the report has them all.`),
  );
}
