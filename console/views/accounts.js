// Accounts: paused or not and why (an operator, a refused key, a provider's 429); pause and
// resume.
import { api } from "../api.js";
import { errorBox, fill, h, noticeBox, table, when } from "../dom.js";

export async function accountsView(main, ctx) {
  const message = h("div", { id: "message" });
  const list = h("div", { id: "account-list" });
  const load = async () => {
    const { accounts } = await api("GET", "/v1/accounts");
    fill(list, accountTable(ctx, accounts, act));
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
  fill(main, h("h1", {}, "Accounts"), message, list);
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
