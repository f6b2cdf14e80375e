// The list of batches: state, progress, totals and times, filtered by account and state.
import { api } from "../api.js";
import { fill, h, table, when } from "../dom.js";
import { accountSelect, field, progressBar, stateBadge, totalsLine } from "./parts.js";

const STATES = [
  "validating",
  "submission_failed",
  "awaiting_approval",
  "scheduled",
  "queued",
  "running",
  "completed",
  "completed_with_failures",
  "cancelled",
];
const REFRESH_MS = 5_000;

export async function batchesView(main, ctx) {
  const account = accountSelect(ctx.me, { id: "filter-account", any: true });
  const state = h(
    "select",
    { id: "filter-state", name: "state" },
    h("option", { value: "" }, "any state"),
    STATES.map((s) => h("option", { value: s }, s.replaceAll("_", " "))),
  );
  const list = h("div", { id: "batch-list" });
  const load = async () => {
    const answer = await api("GET", "/v1/batches", {
      query: { account: account.value, state: state.value, limit: 100 },
    });
    fill(
      list,
      batchTable(answer.batches),
      answer.more && h("p", { class: "hint" }, "Newest 100 shown."),
    );
  };
  account.addEventListener("change", load);
  state.addEventListener("change", load);
  fill(
    main,
    h("h1", {}, "Batches"),
    h("div", { class: "filters" }, field("Account", account), field("State", state)),
    list,
  );
  await load();
  const timer = setInterval(() => load().catch(() => {}), REFRESH_MS);
  ctx.onLeave(() => clearInterval(timer));
}

function batchTable(batches) {
  if (batches.length === 0) return h("p", { class: "hint" }, "No batches.");
  return table(
    [
      [
        "Batch",
        (b) =>
          h(
            "a",
            { href: `#/batch/${encodeURIComponent(b.account)}/${encodeURIComponent(b.batchId)}` },
            b.batchId,
          ),
      ],
      ["Account", (b) => b.account],
      ["Kind", (b) => b.kind],
      ["State", (b) => stateBadge(b.state)],
      ["Progress", (b) => progressBar(b)],
      ["Requested", (b) => totalsLine(b.totals)],
      ["Created", (b) => when(b.createdAt)],
      ["Approved", (b) => (b.approval?.state === "approved" ? when(b.approval.decidedAt) : "–")],
      ["Scheduled for", (b) => when(b.notBefore)],
    ],
    batches,
    { class: "batches" },
  );
}
