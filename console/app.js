// The console's shell: sign-in, the navigation, and which view the address's hash names.
import { api, session } from "./api.js";
import { errorBox, fill, h } from "./dom.js";
import { accountsView } from "./views/accounts.js";
import { batchView } from "./views/batch.js";
import { batchesView } from "./views/batches.js";
import { deadLettersView } from "./views/dead-letters.js";
import { uploadView } from "./views/upload.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");

/** Each view by the first part of the hash; `#/batch/<account>/<id>` opens one batch. */
const VIEWS = {
  batches: { title: "Batches", view: batchesView },
  upload: { title: "Upload", view: uploadView, needs: "submit" },
  batch: { view: batchView },
  "dead-letters": { title: "Dead letters", view: deadLettersView },
  accounts: { title: "Accounts", view: accountsView },
};

/** Stops what the view on screen does in the background (its polling). */
let leaving = () => {};

function signInView(problem) {
  fill(nav);
  const input = h("input", {
    type: "password",
    id: "token",
    name: "token",
    autocomplete: "off",
    required: true,
  });
  const form = h(
    "form",
    { class: "sign-in", id: "sign-in" },
    h("h1", {}, "moneyq console"),
    h("label", { for: "token" }, "API token"),
    input,
    h("button", { type: "submit" }, "Sign in"),
    h(
      "p",
      { class: "hint" },
      "The token stays in this browser tab until you sign out or close it.",
    ),
    problem && errorBox(problem),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    session.signIn(input.value.trim());
    start();
  });
  fill(main, form);
  input.focus();
}

function navigation(me) {
  const current = location.hash.split("/")[1] || "batches";
  const links = Object.entries(VIEWS)
    .filter(([, v]) => v.title && (!v.needs || me.permissions.includes(v.needs)))
    .map(([name, v]) =>
      h("a", { href: `#/${name}`, "aria-current": name === current ? "page" : undefined }, v.title),
    );
  const signOut = h(
    "button",
    {
      type: "button",
      class: "link",
      onclick: () => {
        session.signOut();
        location.hash = "";
        signInView();
      },
    },
    "Sign out",
  );
  fill(
    nav,
    h("span", { class: "brand" }, "moneyq"),
    links,
    h("span", { class: "who" }, me.name),
    signOut,
  );
}

async function route(me) {
  leaving();
  leaving = () => {};
  navigation(me);
  const [, name = "batches", ...rest] = location.hash.split("/");
  const chosen = VIEWS[name] ?? VIEWS.batches;
  const ctx = {
    me,
    can: (permission) => me.permissions.includes(permission),
    onLeave: (stop) => {
      leaving = stop;
    },
  };
  fill(main, h("p", { class: "hint" }, "Loading…"));
  try {
    await chosen.view(main, ctx, rest.map(decodeURIComponent));
  } catch (error) {
    if (error.status === 401) return signInView(error);
    fill(main, errorBox(error));
  }
}

async function start() {
  if (!session.token) return signInView();
  let me;
  try {
    me = await api("GET", "/v1/me");
  } catch (error) {
    session.signOut();
    return signInView(error);
  }
  window.onhashchange = () => route(me);
  await route(me);
}

start();
