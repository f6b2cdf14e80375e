// Pieces several views share: the account picker, a batch's state, its totals.
import { h, table } from "../dom.js";

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
