// Pieces several views share: the account picker, a batch's state, its totals, its repeated
// payments.
import { h, table, when } from "../dom.js";

/** A select of the token's accounts; `any` adds a first choice of all of them (value ""). */
export function accountSelect(me, { id = "account", any = false, value = "" } = {}) {
  const options = me.accounts.map((a) => h("option", { value: a, selected: a === value }, a));
  return h("select", { id, name: id }, any && h("option", { value: "" }, "all accounts"), options);
}

/** A labelled form control. */
export function field(label, control) {
  return h("label", { class: "field" }, h("span", {}, label), control);
}

export function stateBadge(state) {
  return h("span", { class: `state state-${state}` }, state.replaceAll("_", " "));
}

export function progressBar(status) {
  const percent = Math.round((status.progress ?? 0) * 100);
  return h(
    "span",
    { class: "progress" },
    h("progress", { max: 100, value: percent, "aria-label": "progress" }),
    ` ${status.finished} / ${status.accepted}`,
  );
}

/** "NGN 1200.50 (3 rows)" per currency, of one bucket of the totals. */
export function totalsLine(totals, bucket = "requested") {
  const lines = Object.entries(totals ?? {}).map(
    ([currency, t]) => `${currency} ${t[bucket].amount} (${t[bucket].rows})`,
  );
  return lines.length > 0 ? lines.join(", ") : "–";
}

/** Every bucket of every currency (in the order the API gives them): amount and rows. */
export function totalsTable(totals) {
  const currencies = Object.entries(totals ?? {});
  if (currencies.length === 0) return h("p", { class: "hint" }, "No amounts in this batch.");
  const buckets = Object.keys(currencies[0][1]);
  return table(
    [
      ["Currency", ([currency]) => currency],
      ...buckets.map((bucket) => [
        bucket.replaceAll("_", " "),
        ([, t]) => [
          h("span", { class: "amount" }, t[bucket].amount),
          h("small", {}, ` ${t[bucket].rows} rows`),
        ],
      ]),
    ],
    currencies,
    { class: "totals" },
  );
}

const REPEAT_POLICY = {
  warn: "reported only: the rows are sent",
  hold: "the batch waits for approval",
  refuse: "those rows are invalid and not sent",
};

/** One payment a row repeats, as a sentence. */
function repeatText(match) {
  if (match.state === "in_file") return `row ${match.row} of this file`;
  const where =
    match.batchId === undefined ? `job ${match.jobId}` : `batch ${match.batchId}, row ${match.row}`;
  const state = match.state === "unconfirmed" ? "unconfirmed (may have been paid)" : match.state;
  return `${state} ${when(match.at)}: ${where}`;
}

/**
 * The rows whose payment repeats another one (paid or queued under another key in the window,
 * or an earlier row of the file), each with the payments it repeats; nothing when none does.
 */
export function repeatsSection(repeats) {
  if (!repeats || repeats.count === 0) return false;
  const days = Math.round((repeats.windowMs / 86_400_000) * 100) / 100;
  return [
    h("h2", {}, "Repeated payments"),
    h(
      "p",
      { id: "repeats-summary", class: "warning" },
      `${repeats.count} rows repeat a payment of the last ${days} days (policy ${repeats.policy}: ${REPEAT_POLICY[repeats.policy]}).`,
      repeats.rows.length < repeats.count && ` The first ${repeats.rows.length} are listed.`,
    ),
    table(
      [
        ["Row", (r) => String(r.row)],
        ["Reference", (r) => r.reference],
        ["Repeats", (r) => r.matches.map((m) => h("div", {}, repeatText(m)))],
      ],
      repeats.rows,
      { class: "repeats", id: "repeats" },
    ),
  ];
}
