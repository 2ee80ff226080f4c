/* Forms generated from the declarations: ONE table maps every declared parameter kind
   (sdckit.params.KINDS, and "variant") to its widget. Every input has an id and a
   <label for=id> with the human label, the one-line help, the unit and the paper's symbol.
   tests/app/test_frontend.py parses this table and checks it against the declared kinds. */
import { $$, S, esc } from "./util.js";

let seq = 0;
const listText = (v) => (v === null ? "" : esc((Array.isArray(v) ? v : [v]).join(", ")));
const splitList = (t) => t.split(",").map((x) => x.trim()).filter((x) => x !== "");
const columnsOffered = () => (S.state && (S.state.offered_columns || S.state.columns)) || [];
const jsonText = (v) => (v === null || v === undefined ? "" : esc(typeof v === "string" ? v : JSON.stringify(v)));

export function parseLoose(text) {
  const t = text.trim();
  if (t === "") return null;
  if (/^[\[{"]/.test(t) || /^(true|false|null|-?\d+(\.\d+)?)$/.test(t)) { try { return JSON.parse(t); } catch (e) { /* text */ } }
  return t;
}

/* kind -> { html(p, value, id, meta), read(element, p, meta) } */
export const WIDGETS = {
  int: {
    html: (p, v, id, m) => `<input type="number" id="${id}" step="1" ${p.low !== undefined ? `min="${p.low}"` : ""} ${p.high !== undefined ? `max="${p.high}"` : ""} value="${v === null ? "" : esc(v)}" placeholder="${p.default === null ? "" : esc(p.default)}">`,
    read: (el) => (el.value === "" ? null : parseInt(el.value, 10)),
  },
  float: {
    html: (p, v, id, m) => {
      const k = m.percent ? 100 : 1, show = (x) => (x === null || x === undefined ? "" : Number((x * k).toPrecision(10)));
      return `<input type="number" id="${id}" step="any" ${p.low !== undefined ? `min="${p.low * k}"` : ""} ${p.high !== undefined ? `max="${p.high * k}"` : ""} value="${esc(show(v))}" placeholder="${p.default === null ? "" : esc(show(p.default))}">`;
    },
    read: (el, p, m) => (el.value === "" ? null : parseFloat(el.value) / (m.percent ? 100 : 1)),
  },
  bool: {
    html: (p, v, id) => `<input type="checkbox" id="${id}" ${(v === null ? p.default : v) ? "checked" : ""}>`,
    read: (el, p) => (el.checked === !!p.default ? null : el.checked),
  },
  str: {
    html: (p, v, id) => `<input type="text" id="${id}" value="${jsonText(v)}" placeholder="${p.default === null ? "" : jsonText(p.default)}">`,
    read: (el) => parseLoose(el.value),
  },
  choice: {
    html: (p, v, id) => `<select id="${id}">${p.required ? "" : `<option value="">(default: ${esc(p.default)})</option>`}${(p.choices || []).map((c) =>
      `<option ${v === c ? "selected" : ""}>${esc(c)}</option>`).join("")}</select>`,
    read: (el) => el.value || null,
  },
  column: {
    html: (p, v, id) => `<select id="${id}"><option value="">${p.required ? "(choose)" : "(default)"}</option>${columnsOffered().map((c) =>
      `<option ${v === c ? "selected" : ""}>${esc(c)}</option>`).join("")}</select>`,
    read: (el) => el.value || null,
  },
  columns: {
    html: (p, v, id) => {
      const sel = v === null ? [] : (Array.isArray(v) ? v : [v]);
      return `<select multiple id="${id}">${columnsOffered().map((c) => `<option ${sel.includes(c) ? "selected" : ""}>${esc(c)}</option>`).join("")}</select>`;
    },
    read: (el) => { const v = Array.from(el.selectedOptions).map((o) => o.value); return v.length ? v : null; },
  },
  int_list: {
    html: (p, v, id) => `<input type="text" id="${id}" value="${listText(v)}" placeholder="comma separated whole numbers">`,
    read: (el) => { const t = splitList(el.value); return t.length ? t.map(Number) : null; },
  },
  float_list: {
    html: (p, v, id) => `<input type="text" id="${id}" value="${listText(v)}" placeholder="comma separated numbers">`,
    read: (el) => { const t = splitList(el.value); return t.length ? t.map(Number) : null; },
  },
  str_list: {
    /* one item per row (add and remove rows): an item may hold commas ("x in [1, 2] -> ...") */
    html: (p, v, id, m) => {
      const items = v === null ? [] : (Array.isArray(v) ? v : [v]);
      const row = (x) => `<div class="listrow"><input type="text" value="${esc(x)}" aria-label="${esc(m.label)}: one item" placeholder="one item"> <button type="button" class="tiny secondary rowdel" title="remove this row" aria-label="remove this row">×</button></div>`;
      return `<div class="rowlist" id="${id}" data-widget="rows">${(items.length ? items : [""]).map(row).join("")}<template>${row("")}</template>
        <button type="button" class="tiny secondary rowadd">+ add a row</button></div>`;
    },
    read: (el) => { const t = $$(".listrow input", el).map((i) => i.value.trim()).filter((x) => x !== ""); return t.length ? t : null; },
  },
  mapping: {
    /* a table whose values have a declared kind (value_kind): one row per variable with the
       value's own widget; else the free table (a recode's groups, with its helper) */
    html: (p, v, id, m) => (p.value_kind ? valueTableHtml(p, v, id, m) : `<textarea id="${id}" placeholder="a table, e.g. {&quot;young&quot;: [1, 2]}">${v === null ? "" : esc(JSON.stringify(v))}</textarea>` +
      (p.name === "mapping" ? `<button type="button" class="tiny secondary grouper" data-for="${esc(p.name)}">group the categories…</button><div class="groups"></div>` : "")),
    read: (el, p) => { if (p.value_kind) return readValueTable(el, p); const t = el.value.trim(); if (!t) return null; try { return JSON.parse(t); } catch (e) { return parseLoose(t); } },
  },
  path: {
    html: (p, v, id) => `<input type="text" id="${id}" value="${jsonText(v)}" placeholder="a file name in the workbench's folders">`,
    read: (el) => parseLoose(el.value),
  },
  any: {
    html: (p, v, id) => `<input type="text" id="${id}" value="${jsonText(v)}" placeholder="${Array.isArray(p.default) ? "a name, or a list [&quot;a&quot;, &quot;b&quot;]" : (p.default === null ? "" : jsonText(p.default))}">`,
    read: (el) => parseLoose(el.value),
  },
  variant: {
    /* a chooser that shows only the chosen variant's fields (Param.variants, from the API);
       its value is the spec's inline table { type = "...", its own settings } */
    html: (p, v, id, m, owner) => {
      const variants = p.variants || [];
      const chosen = (v && v.type) || (p.default && p.default.type) || (variants[0] && variants[0].type);
      return `<select id="${id}" class="variant-chooser">${variants.map((x) => `<option value="${esc(x.type)}" ${x.type === chosen ? "selected" : ""}>${esc((x.summary || x.type).split(/[:(]/)[0].slice(0, 70))}</option>`).join("")}</select>
        ${variants.map((x) => `<div class="variant" data-variant="${esc(x.type)}" ${x.type === chosen ? "" : "hidden"}>${(x.params || []).map((q) =>
          fieldHtml(`${owner}:${p.name}:${x.type}`, q, x.type === chosen && v ? v[q.name] : undefined)).join("")}</div>`).join("")}`;
    },
    read: (el, p, m, owner) => {
      const type = el.value, box = el.parentElement.querySelector(`:scope > .variant[data-variant="${CSS.escape(type)}"]`);
      const variant = (p.variants || []).find((x) => x.type === type) || { params: [] };
      const own = readFields(box, variant.params, null, `${owner}:${p.name}:${type}`);
      if (p.default && p.default.type === type && !Object.keys(own).length) return null;  // the default builder
      return { type, ...own };
    },
  },
};

/* a mapping with a value_kind: "choice" -> one row per variable of the data (the variable's
   name as the label, the declared choices in a list, empty = the step's default); any other
   value kind -> rows of (variable, value) added and removed by the steward */
const VALUE_HINTS = { str: "a formula, e.g. weight / (height / 100) ** 2", float_list: "numbers, e.g. -8, -9",
                      int_list: "whole numbers, e.g. -8, -9", float: "a number", int: "a whole number" };
function valueText(v) { return v === null || v === undefined ? "" : (Array.isArray(v) ? v.join(", ") : String(v)); }
function valueTableHtml(p, v, id, m) {
  const table = v && typeof v === "object" && !Array.isArray(v) ? v : {};
  const cols = columnsOffered();
  if (p.value_kind === "choice") {
    const rows = [...cols, ...Object.keys(table).filter((c) => !cols.includes(c))];
    return `<table class="grid small maptable" id="${id}" data-widget="per-variable"><tr><th>variable</th><th>${esc(m.label)}</th></tr>${rows.map((c, i) => {
      const cid = `${id}-r${i}`;
      return `<tr data-col="${esc(c)}"><td><label for="${cid}">${esc(c)}</label></td><td><select id="${cid}"><option value="">(default)</option>${(p.value_choices || []).map((x) =>
        `<option ${table[c] === x ? "selected" : ""}>${esc(x)}</option>`).join("")}</select></td></tr>`; }).join("")}</table>`;
  }
  const hint = VALUE_HINTS[p.value_kind] || "a value";
  const row = (c, x) => `<div class="listrow maprow"><select aria-label="${esc(m.label)}: variable"><option value="">(variable)</option>${[...new Set([...cols, ...(c ? [c] : [])])].map((k) =>
    `<option ${k === c ? "selected" : ""}>${esc(k)}</option>`).join("")}</select>
    <input type="text" value="${esc(valueText(x))}" aria-label="${esc(m.label)}: ${esc(hint.split(",")[0])}" placeholder="${esc(hint)}">
    <button type="button" class="tiny secondary rowdel" title="remove this row" aria-label="remove this row">×</button></div>`;
  return `<div class="rowlist" id="${id}" data-widget="rows">${(Object.keys(table).length ? Object.entries(table) : [["", ""]]).map(([c, x]) => row(c, x)).join("")}<template>${row("", "")}</template>
    <button type="button" class="tiny secondary rowadd">+ add a variable</button></div>`;
}
function readValueTable(el, p) {
  const out = {};
  if (p.value_kind === "choice") {
    $$("tr[data-col]", el).forEach((tr) => { const x = tr.querySelector("select").value; if (x) out[tr.dataset.col] = x; });
  } else {
    $$(".maprow", el).forEach((r) => {
      const c = r.querySelector("select").value, t = r.querySelector("input").value.trim();
      if (!c || t === "") return;
      if (p.value_kind === "str") out[c] = t;
      else if (p.value_kind === "int" || p.value_kind === "float") out[c] = Number(t);
      else out[c] = splitList(t).map(Number);
    });
  }
  return Object.keys(out).length ? out : null;
}
/* the rows' add and remove buttons, wherever a form is drawn */
document.addEventListener("click", (e) => {
  const b = e.target.closest && e.target.closest("button.rowadd, button.rowdel");
  if (!b) return;
  if (b.classList.contains("rowdel")) { b.closest(".listrow").remove(); return; }
  const list = b.closest(".rowlist");
  list.insertBefore(list.querySelector(":scope > template").content.cloneNode(true), b);
  const rows = list.querySelectorAll(":scope > .listrow");
  const last = rows[rows.length - 1];
  if (last) (last.querySelector("select") || last.querySelector("input")).focus();
});

/* the label, symbol and unit of a parameter: the declaration's label, or the one the server
   derived from its help (app/words.py); the symbol only where it does not repeat the label */
export function meta(owner, p, labels) {
  const m = (labels || (S.labels && S.labels[owner]) || {})[p.name] || {};
  const label = m.label || p.label;
  return { label, symbol: m.symbol === undefined ? shownSymbol(label, p.symbol) : m.symbol,
           unit: m.unit === undefined ? p.unit : m.unit, percent: !!m.percent };
}

/* the paper's symbol beside a label, unless the label already says it ("k" beside "k-anonymity") */
export function shownSymbol(label, symbol) {
  if (!symbol) return null;
  const bare = String(symbol).toLowerCase().replace(/[_^]/g, "");
  const words = String(label || "").toLowerCase().split(/[^a-z0-9_]+/).map((w) => w.replace(/_/g, ""));
  return words.includes(bare) ? null : symbol;
}

export function fieldHtml(owner, p, value, labels) {
  const w = WIDGETS[p.kind] || WIDGETS.any;
  const m = meta(owner, p, labels);
  const id = `f${++seq}-${String(p.name).replace(/[^A-Za-z0-9_-]/g, "_")}`;
  const v = value === undefined ? null : value;
  const input = w.html(p, v, id, m, owner).replace(/^<(input|select|textarea|div|table)/, `<$1 name="${esc(p.name)}" data-kind="${esc(p.kind)}"`);
  return `<div class="field" data-param="${esc(p.name)}"><label for="${id}">${esc(m.label)}${m.symbol ? ` <span class="sym">${esc(m.symbol)}</span>` : ""}${p.required ? " *" : ""}${m.unit ? ` <span class="unit">(${esc(m.unit)})</span>` : ""}</label>
    <div>${input}</div><div class="help">${esc(p.help || "")}</div></div>`;
}

export function formHtml(m, values = {}) {
  const basic = m.params.filter((p) => !p.advanced), adv = m.params.filter((p) => p.advanced);
  const one = (p) => fieldHtml(m.name, p, values[p.name]);
  return `<div class="form" data-method="${esc(m.name)}"><p class="muted">${esc(m.summary)}</p>${basic.map(one).join("")}
    ${adv.length ? `<details><summary>more options</summary>${adv.map(one).join("")}</details>` : ""}</div>`;
}

export function readFields(box, params, labels, owner) {
  const out = {};
  for (const p of params || []) {
    const field = box.querySelector(`:scope .field[data-param="${CSS.escape(p.name)}"]`);
    const el = field && field.querySelector(`[name="${CSS.escape(p.name)}"]`);
    if (!el) continue;
    const v = (WIDGETS[p.kind] || WIDGETS.any).read(el, p, meta(owner, p, labels), owner);
    if (v === null || v === undefined || (typeof v === "number" && isNaN(v))) continue;
    if (JSON.stringify(v) === JSON.stringify(p.default)) continue;
    out[p.name] = v;
  }
  return out;
}

export function readForm(formEl, m) {
  return { method: m.name, ...readFields(formEl, m.params, null, m.name) };
}

/* a variant chooser shows only the chosen variant's fields */
export function wireVariants(root) {
  root.querySelectorAll(".variant-chooser").forEach((sel) => {
    sel.onchange = () => sel.parentElement.querySelectorAll(":scope > .variant").forEach((d) => { d.hidden = d.dataset.variant !== sel.value; });
  });
}
