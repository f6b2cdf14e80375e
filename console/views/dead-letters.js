// Dead letters: search by account, reference or key; replay one or a selection (same key),
// with the answer of each; resolve one with evidence (what the provider did, and a note); the
// account's audit trail of resolutions.
import { api } from "../api.js";
import { errorBox, fill, h, table, when } from "../dom.js";
import { accountSelect, field } from "./parts.js";

export async function deadLettersView(main, ctx) {
  const account = accountSelect(ctx.me, { id: "dl-account" });
  const by = h(
    "select",
    { id: "dl-by", name: "by" },
    h("option", { value: "reference" }, "reference"),
    h("option", { value: "idempotencyKey" }, "idempotency key"),
  );
  const term = h("input", { type: "search", id: "dl-term", name: "term", placeholder: "all" });
  const message = h("div", { id: "message" });
  const list = h("div", { id: "dead-letter-list" });
  const trail = h("div", { id: "resolution-trail" });
  const search = async () => {
    const query = { account: account.value, limit: 200 };
    if (term.value.trim()) query[by.value] = term.value.trim();
    try {
      const answer = await api("GET", "/v1/dead-letters", { query });
      fill(message);
      fill(list, letters(ctx, answer.account, answer.deadLetters, message));
      fill(trail, await resolutionTrail(answer.account));
    } catch (error) {
      fill(message, errorBox(error));
    }
  };
  const form = h(
    "form",
    { class: "filters", id: "dl-search" },
    field("Account", account),
    field("Search by", by),
    field("Value", term),
    h("button", { type: "submit" }, "Search"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    search();
  });
  fill(main, h("h1", {}, "Dead letters"), form, message, list, trail);
  await search();
}

function letters(ctx, account, deadLetters, message) {
  if (deadLetters.length === 0) return h("p", { class: "hint" }, "No dead letters.");
  const answers = new Map(deadLetters.map((d) => [d.jobId, h("span", { class: "answer" })]));
  const picked = new Map(
    deadLetters.map((d) => [
      d.jobId,
      h("input", { type: "checkbox", "aria-label": `select ${d.jobId}` }),
    ]),
  );
  const replay = async (jobIds) => {
    for (const jobId of jobIds) {
      const answer = answers.get(jobId);
      try {
        const done = await api("POST", `/v1/dead-letters/${encodeURIComponent(jobId)}/replay`, {
          query: { account },
        });
        // A payment the provider made is resolved, not sent again.
        fill(
          answer,
          done.replayed === false ? "paid at the provider: resolved, not sent" : "replayed",
        );
        answer.className = "answer ok";
      } catch (error) {
        fill(answer, `${error.code}: ${error.message}`);
        answer.className = "answer refused";
      }
    }
  };
  const operate = ctx.can("operate");
  const columns = [
    operate && ["", (d) => picked.get(d.jobId)],
    ["Job", (d) => h("code", {}, d.jobId)],
    ["Kind", (d) => d.kind],
    ["Reference", (d) => d.reference ?? "–"],
    ["Idempotency key", (d) => h("code", {}, d.idempotencyKey)],
    [
      "Batch",
      (d) =>
        d.batchId
          ? h(
              "a",
              { href: `#/batch/${encodeURIComponent(account)}/${encodeURIComponent(d.batchId)}` },
              d.batchId,
            )
          : "–",
    ],
    [
      "Result",
      (d) => (d.result ? `${d.result.result}${d.result.code ? ` (${d.result.code})` : ""}` : "–"),
    ],
    ["Reason", (d) => d.result?.message ?? d.failedReason],
    ["Failed at", (d) => when(d.failedAt)],
    operate && [
      "Replay",
      (d) => [
        h(
          "button",
          { type: "button", class: "replay", onclick: () => replay([d.jobId]) },
          "Replay",
        ),
        " ",
        answers.get(d.jobId),
      ],
    ],
    operate && ["Resolve", (d) => resolveControl(d, answers.get(d.jobId))],
  ].filter(Boolean);
  const replaySelected = () => {
    const chosen = [...picked].filter(([, box]) => box.checked).map(([jobId]) => jobId);
    if (chosen.length === 0)
      return fill(message, errorBox({ message: "select the dead letters to replay" }));
    return replay(chosen);
  };
  return [
    operate &&
      h(
        "div",
        { class: "actions" },
        h(
          "button",
          { type: "button", id: "replay-selected", onclick: replaySelected },
          "Replay selected",
        ),
      ),
    table(columns, deadLetters, { class: "dead-letters" }),
  ];
}

/** What an operator says of a job's outcome, with a note: resolved, or waiting for a second person. */
function resolveControl(d, answer) {
  if (d.result?.result !== "needs_reconciliation" && d.result?.result !== "failed") return "–";
  const note = h("input", { type: "text", class: "resolve-note", placeholder: "how you know" });
  const resolve = async (result) => {
    try {
      const done = await api("POST", `/v1/jobs/${encodeURIComponent(d.jobId)}/resolve`, {
        json: { result, note: note.value },
      });
      fill(
        answer,
        done.state === "resolved" ? `resolved: ${result}` : "waiting for a second person",
      );
      answer.className = "answer ok";
    } catch (error) {
      fill(answer, `${error.code}: ${error.message}`);
      answer.className = "answer refused";
    }
  };
  return [
    note,
    " ",
    h(
      "button",
      { type: "button", class: "resolve-paid", onclick: () => resolve("succeeded") },
      "Paid",
    ),
    " ",
    h(
      "button",
      { type: "button", class: "resolve-unpaid", onclick: () => resolve("failed") },
      "Not paid",
    ),
  ];
}

/** The account's audit trail of resolutions, newest first. */
async function resolutionTrail(account) {
  try {
    const { resolutions } = await api("GET", "/v1/resolutions", { query: { account, limit: 50 } });
    if (resolutions.length === 0) return h("p", { class: "hint" }, "No resolutions yet.");
    return [
      h("h2", {}, "Resolutions"),
      table(
        [
          ["Job", (r) => h("code", {}, r.jobId)],
          ["Was", (r) => r.from],
          ["Resolved to", (r) => r.to],
          [
            "By",
            (r) => [
              r.resolver.by,
              r.resolver.name ? ` ${r.resolver.name}` : "",
              r.resolver.approvedBy ? `, approved by ${r.resolver.approvedBy}` : "",
            ],
          ],
          ["Note", (r) => r.note ?? "–"],
          ["When", (r) => when(r.at)],
        ],
        resolutions,
        { class: "resolutions" },
      ),
    ];
  } catch (error) {
    return errorBox(error);
  }
}
