// Builds elements from data. Text always goes in as text nodes: nothing from the API or a file
// is ever parsed as HTML.

/**
 * An element: `attrs` sets attributes, `class`, and `on<event>` listeners; children are
 * elements, strings (as text) or nothing (false, null, undefined are skipped).
 */
export function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function")
      element.addEventListener(name.slice(2), value);
    else if (name === "class") element.className = value;
    else if (name === "value") element.value = value;
    else if (name === "checked") element.checked = Boolean(value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces everything in `element` with `children`. */
export function fill(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

/** A table: `columns` are [heading, (row) => cell content]. */
export function table(columns, rows, attrs = {}) {
  return h(
    "table",
    attrs,
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        columns.map(([heading]) => h("th", { scope: "col" }, heading)),
      ),
    ),
    h(
      "tbody",
      {},
      rows.map((row) =>
        h(
          "tr",
          {},
          columns.map(([, cell]) => h("td", {}, cell(row))),
        ),
      ),
    ),
  );
}

/** A time as the operator's browser writes it, or a dash. */
export function when(iso) {
  if (!iso) return "–";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

/** An error as the API said it: its message, then each field and rule. */
export function errorBox(error) {
  const details = error.details ?? [];
  return h(
    "div",
    { class: "error", role: "alert" },
    h("strong", {}, error.code ? `${error.code}: ` : "", error.message ?? String(error)),
    details.length > 0 &&
      h(
        "ul",
        {},
        details.map((d) => h("li", {}, h("code", {}, d.field ?? ""), " ", d.rule ?? "")),
      ),
  );
}

/** A note that an action went through. */
export function noticeBox(text) {
  return h("div", { class: "notice", role: "status" }, text);
}
