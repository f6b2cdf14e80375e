// Accounts: paused or not and why (an operator, a refused key, a provider's 429); pause and
// resume. Currency lanes held by a velocity limit or insufficient funds: release (approvers,
// never the submitter), resume after funding (operators), cancel the held work.
import { api } from "../api.js";
import { errorBox, fill, h, noticeBox, table, when } from "../dom.js";

export async function accountsView(main, ctx) {
  const message = h("div", { id: "message" });
  const list = h("div", { id: "account-list" });
  const holds = h("div", { id: "lane-holds" });
  const load = async () => {
    const { accounts } = await api("GET", "/v1/accounts");
    fill(list, accountTable(ctx, accounts, act));
    const held = [];
    for (const a of accounts) {
      const answer = await api("GET", `/v1/accounts/${encodeURIComponent(a.alias)}/holds`);
      for (const hold of answer.holds) held.push({ alias: a.alias, ...hold });
    }
    fill(holds, held.length === 0 ? "" : holdTable(ctx, held, endHold));
  };
  const endHold = async (hold, verb) => {
    try {
      const path = `/v1/accounts/${encodeURIComponent(hold.alias)}/holds/${hold.currency}/${verb}`;
      const answer = await api("POST", path, {
        json: verb === "cancel" ? { cause: hold.cause } : undefined,
      });
      await load();
      const count = answer.released ?? answer.resumed ?? answer.cancelled ?? 0;
      const done = { release: "released", resume: "resumed", cancel: "cancelled" }[verb];
      fill(message, noticeBox(`${hold.alias} ${hold.currency}: ${count} held job(s) ${done}.`));
    } catch (error) {
      fill(message, errorBox(error));
    }
  };
  const act = async (alias, verb, reason) => {
    try {
      const json = verb === "pause" && reason ? { reason } : undefined;
      await api("POST", `/v1/accounts/${encodeURIComponent(alias)}/${verb}`, { json });
      await load();
      fill(message, noticeBox(`${alias} ${verb === "pause" ? "paused" : "resumed"}.`));
    } catch (error) {
      fill(message, errorBox(error));
    }
  };
  fill(main, h("h1", {}, "Accounts"), message, list, holds);
  await load();
}

function why(account) {
  const lines = [];
  if (account.paused) {
    const by =
      { operator: "by an operator", key_refused: "the provider refused its key" }[
        account.pause?.cause
      ] ?? "";
    lines.push(
      h(
        "div",
        {},
        h("strong", {}, "Paused"),
        by && ` (${by})`,
        `: ${account.pause?.reason ?? ""}, since ${when(account.pause?.pausedAt)}`,
      ),
    );
  }
  if (account.rateLimitedUntil)
    lines.push(
      h(
        "div",
        {},
        h("strong", {}, "Held by the provider's rate limit (429)"),
        ` until ${when(account.rateLimitedUntil)}`,
      ),
    );
  return lines.length > 0 ? lines : "Running";
}

function accountTable(ctx, accounts, act) {
  const controls = (a) => {
    if (a.paused)
      return h(
        "button",
        { type: "button", class: "resume", onclick: () => act(a.alias, "resume") },
        "Resume",
      );
    const reason = h("input", {
      type: "text",
      class: "reason",
      placeholder: "reason",
      "aria-label": `reason to pause ${a.alias}`,
      maxlength: 500,
    });
    return [
      reason,
      " ",
      h(
        "button",
        {
          type: "button",
          class: "pause danger",
          onclick: () => act(a.alias, "pause", reason.value.trim()),
        },
        "Pause",
      ),
    ];
  };
  return table(
    [
      ["Account", (a) => h("code", {}, a.alias)],
      ["State", why],
      ctx.can("operate") && ["", controls],
    ].filter(Boolean),
    accounts,
    { class: "accounts" },
  );
}

const CAUSES = {
  velocity: "Velocity limit reached",
  insufficient_funds: "Insufficient funds",
};

function holdTable(ctx, held, endHold) {
  const button = (hold, verb, label, cls) =>
    h("button", { type: "button", class: cls, onclick: () => endHold(hold, verb) }, label);
  const controls = (hold) =>
    [
      hold.cause === "velocity" &&
        ctx.can("approve") &&
        button(hold, "release", "Release once", "release"),
      hold.cause === "insufficient_funds" &&
        ctx.can("operate") &&
        button(hold, "resume", "Resume (wallet funded)", "resume"),
      " ",
      ctx.can("approve") && button(hold, "cancel", "Cancel held jobs", "cancel danger"),
    ].filter(Boolean);
  return [
    h("h2", {}, "Held lanes"),
    table(
      [
        ["Account", (x) => h("code", {}, x.alias)],
        ["Currency", (x) => x.currency],
        ["Why", (x) => CAUSES[x.cause] ?? x.cause],
        ["Jobs held", (x) => String(x.jobIds.length)],
        ["Until", (x) => (x.until ? when(x.until) : "an operator ends it")],
        ["", controls],
      ],
      held,
      { class: "lane-holds" },
    ),
  ];
}
