/* sdckit workbench: the browser side. Vanilla JS; charts with Vega-Lite (vega.js is the bundle
   of the installed vl-convert package, served by the app: no network needed). */
(() => {
"use strict";

const CSRF = document.querySelector('meta[name="csrf"]').content;
const S = { state: null, methods: null, gateChecks: null, variables: null, suggestions: null,
            page: "data", results: null, tableFile: null, ptableFile: null, explore: null };
const $ = (sel, el = document) => el.querySelector(sel);
const $$ = (sel, el = document) => Array.from(el.querySelectorAll(sel));
const esc = (s) => String(s === undefined || s === null ? "" : s).replace(/[&<>"']/g,
  (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
const fmt = (v, d = 4) => (v === null || v === undefined) ? "–" : (typeof v === "number"
  ? (Number.isInteger(v) ? v.toLocaleString("en") : Number(v.toPrecision(d)).toString()) : String(v));
const pct = (v) => (v === null || v === undefined) ? "–" : (100 * v).toFixed(3) + " %";

/* ------------------------------------------------------------------ API */
let busyCount = 0;
function busy(on) { busyCount += on ? 1 : -1; $("#busy").hidden = busyCount <= 0; }
function showError(msg) { const e = $("#error"); e.textContent = msg; e.hidden = !msg; }

async function api(path, { method = "GET", body = null, raw = null, headers = {} } = {}) {
  const opts = { method, headers: { ...headers }, credentials: "same-origin" };
  if (method !== "GET") opts.headers["X-CSRF-Token"] = CSRF;
  if (body !== null) { opts.headers["Content-Type"] = "application/json"; opts.body = JSON.stringify(body); }
  if (raw !== null) opts.body = raw;
  busy(true);
  try {
    const r = await fetch(path, opts);
    const ct = r.headers.get("content-type") || "";
    const data = ct.includes("json") ? await r.json() : await r.text();
    if (!r.ok) { const msg = (data && data.error) || `${r.status} ${r.statusText}`; showError(msg); throw new Error(msg); }
    showError("");
    return data;
  } finally { busy(false); }
}

function chart(el, spec) {
  if (typeof vegaEmbed === "undefined") { el.textContent = "(charts unavailable)"; return; }
  spec.$schema = "https://vega.github.io/schema/vega-lite/v5.json";
  spec.config = Object.assign({ view: { stroke: null }, axis: { labelFontSize: 11, titleFontSize: 11 } }, spec.config || {});
  vegaEmbed(el, spec, { actions: false, renderer: "svg" }).catch((e) => { el.textContent = "chart error: " + e.message; });
}
function chartDiv(parent, title) {
  const box = document.createElement("div");
  if (title) { const h = document.createElement("h4"); h.textContent = title; box.appendChild(h); }
  const c = document.createElement("div"); box.appendChild(c); parent.appendChild(box); return c;
}

/* ------------------------------------------------------------------ navigation */
function go(page) {
  S.page = page;
  $$("#tabs a").forEach((a) => a.classList.toggle("active", a.dataset.page === page));
  $$(".page").forEach((p) => p.classList.toggle("active", p.id === "page-" + page));
  render(page);
}
window.addEventListener("hashchange", () => go((location.hash || "#data").slice(1)));

function setState(st) {
  S.state = st;
  const hb = $("#historybar");
  if (!st.has_data) { hb.hidden = true; $("#dataset").textContent = "no data open"; return; }
  hb.hidden = false;
  const file = st.spec.input.path.split(/[\\/]/).pop();
  $("#dataset").textContent = `${file} · ${st.n_records.toLocaleString("en")} records · ${st.columns.length} columns`;
  const h = st.history;
  $("#undo").disabled = !h.can_undo; $("#redo").disabled = !h.can_redo;
  $("#branch").innerHTML = h.branches.map((b) => `<option ${b === h.branch ? "selected" : ""}>${esc(b)}</option>`).join("");
  $("#historylist").innerHTML = h.entries.map((e) =>
    `<option value="${e.i}" ${e.i === h.pos ? "selected" : ""}>${e.i + 1}. ${esc(e.label)}</option>`).join("");
  S.results = null;
  refreshStrip();
}

let stripSeq = 0;
async function refreshStrip() {
  const el = $("#riskstrip");
  const seq = ++stripSeq;  // an older answer arriving late must not overwrite a newer one
  if (!S.state || !S.state.has_data) { el.innerHTML = ""; return; }
  try {
    const r = await getResults();
    if (seq !== stripSeq) return;
    const rk = r.risk_after;
    if (!rk || rk.empty) { el.innerHTML = `<span class="pill">set key variables to see the risk</span>`; return; }
    const gate = r.verdict_kind === "not checked" ? "gate NOT CHECKED" : (r.passed === null ? "no gate set" : (r.passed ? "gate passed" : "gate FAILED"));
    el.innerHTML = `<span class="pill">after ${r.n_steps} steps</span>
      <span class="pill">uniques <b>${fmt(rk.n_sample_uniques)}</b></span>
      <span class="pill">f<sub>k</sub>&lt;3 <b>${fmt(rk.k_violations["3"])}</b></span>
      <span class="pill">global risk <b>${pct(rk.global_risk)}</b></span>
      <span class="pill">${gate}</span>`;
  } catch (e) { el.innerHTML = ""; }
}

async function getResults() {
  if (!S.results) S.results = api("/api/results");
  return S.results;
}

async function render(page) {
  const el = $("#page-" + page);
  try {
    if (page !== "data" && page !== "tables" && (!S.state || !S.state.has_data)) {
      el.innerHTML = `<div class="empty">Open a data file first (<a href="#data">Data page</a>).</div>`; return;
    }
    await ({ data: renderData, roles: renderRoles, risk: renderRisk, steps: renderSteps, compare: renderCompare,
             explore: renderExplore, release: renderRelease, tables: renderTables })[page](el);
  } catch (e) { if (!$("#error").textContent) showError(e.message); }
}

/* ------------------------------------------------------------------ 1 data */
async function renderData(el) {
  const files = await api("/api/files");
  let html = `<h2>Open data</h2><div class="row"><div class="card"><h3>Pick a file</h3>
    <label class="small">codes meaning missing (comma separated, optional) <input type="text" id="na" placeholder="-9"></label>`;
  for (const f of files.folders) {
    html += `<h4 class="muted small">${esc(f.folder)}</h4>` + (f.files.length ? f.files.map((n) =>
      `<div><button class="secondary tiny pick" data-root="${f.root}" data-name="${esc(n)}">Open</button> ${esc(n)}</div>`).join("")
      : `<div class="muted small">no data files</div>`);
  }
  html += `</div><div class="card"><h3>Upload</h3><p class="small muted">CSV, Parquet, SPSS (.sav), Stata (.dta) or SAS (.sas7bdat). The file stays on this machine.</p>
    <input type="file" id="upload" accept=".csv,.parquet,.pq,.sav,.zsav,.dta,.sas7bdat"></div></div>`;
  html += `<div id="vars"></div>`;
  el.innerHTML = html;
  $$(".pick", el).forEach((b) => b.onclick = async () => {
    setState(await api("/api/open", { method: "POST", body: { root: +b.dataset.root, name: b.dataset.name, na_values: $("#na").value } }));
    S.variables = null; S.suggestions = null; renderVars($("#vars"));
  });
  $("#upload", el).onchange = async (ev) => {
    const f = ev.target.files[0]; if (!f) return;
    const na = encodeURIComponent($("#na").value || "");
    setState(await api("/api/upload?na_values=" + na, { method: "POST", raw: f, headers: { "X-Filename": f.name } }));
    S.variables = null; S.suggestions = null; renderVars($("#vars"));
  };
  if (S.state && S.state.has_data) renderVars($("#vars"));
}

async function renderVars(el) {
  const v = S.variables = await api("/api/variables");
  el.innerHTML = `<div class="card"><h3>Variables of ${esc(v.file.split(/[\\/]/).pop())}
      <span class="tag">${esc(v.format)}</span> <span class="tag">${v.n_records.toLocaleString("en")} records</span></h3>
    <table class="grid" id="vartable"><tr><th>variable</th><th>label</th><th>type</th><th>categories</th><th>missing</th><th>value labels</th><th>most frequent values</th></tr>
    ${v.columns.map((c) => `<tr><td><b>${esc(c.name)}</b></td><td>${esc(c.label || "")}</td><td>${esc(c.kind)} <span class="muted small">${esc(c.dtype)}</span></td>
      <td>${fmt(c.n_categories)}</td><td>${c.n_missing ? fmt(c.n_missing) : "–"}</td>
      <td class="small">${c.n_value_labels ? Object.entries(c.value_labels).slice(0, 6).map(([k, l]) => `${esc(k)}=${esc(l)}`).join(", ") + (c.n_value_labels > 6 ? " …" : "") : "–"}</td>
      <td class="small">${c.examples.map(esc).join(", ")}</td></tr>`).join("")}</table>
    <p><a class="btn" href="#roles">Next: set roles →</a></p></div>`;
}

/* ------------------------------------------------------------------ 2 roles */
const ROLES = [["", "—"], ["key_vars", "key"], ["numeric_vars", "numeric"], ["weight", "weight"],
               ["household", "household"], ["strata", "strata"], ["sensitive", "sensitive"]];

async function renderRoles(el) {
  if (!S.suggestions) S.suggestions = await api("/api/suggestions");
  const sg = S.suggestions, roles = S.state.spec.roles || {};
  const roleOf = (c) => {
    for (const [r] of ROLES) { if (!r) continue; const v = roles[r]; if (v === c || (Array.isArray(v) && v.includes(c))) return r; }
    return "";
  };
  const suggested = (c) => sg.identifiers.includes(c) ? "identifier: remove" : sg.key_vars.includes(c) ? "key"
    : sg.numeric_vars.includes(c) ? "numeric" : sg.weight === c ? "weight" : sg.household === c ? "household" : "";
  el.innerHTML = `<h2>Set roles</h2><div class="row"><div class="card" style="flex:2 1 600px">
    <p class="small muted">Key variables are the quasi-identifiers an intruder may know. Suggestions come from the ${esc(sg.source)}.</p>
    <p><button class="secondary" id="applysugg">Use the suggestions</button> <button id="saveroles">Save roles</button></p>
    <table class="grid rolegrid"><tr><th>variable</th><th>role</th><th>suggestion</th></tr>
    ${S.state.columns.map((c) => `<tr><td>${esc(c)}</td><td><select data-col="${esc(c)}">${ROLES.map(([r, l]) =>
      `<option value="${r}" ${roleOf(c) === r ? "selected" : ""}>${l}</option>`).join("")}</select></td>
      <td class="sugg">${esc(suggested(c))} <span class="muted">${esc(sg.reasons[c] || "")}</span>
      ${sg.identifiers.includes(c) ? `<button class="tiny secondary addremove" data-col="${esc(c)}">add a remove step</button>` : ""}</td></tr>`).join("")}
    </table></div><div class="card" id="rolerisk"><h3>Risk with these keys</h3><div class="muted">save the roles to measure</div></div></div>`;
  $("#applysugg", el).onclick = () => {
    $$("select[data-col]", el).forEach((s) => {
      const c = s.dataset.col;
      s.value = sg.key_vars.includes(c) ? "key_vars" : sg.numeric_vars.includes(c) ? "numeric_vars"
        : sg.weight === c ? "weight" : sg.household === c ? "household" : "";
    });
  };
  $("#saveroles", el).onclick = async () => {
    const out = {};
    $$("select[data-col]", el).forEach((s) => {
      const r = s.value; if (!r) return;
      if (r === "weight" || r === "household") out[r] = s.dataset.col; else (out[r] = out[r] || []).push(s.dataset.col);
    });
    setState(await api("/api/roles", { method: "POST", body: { roles: out } }));
    renderRiskInto($("#rolerisk"), await api("/api/risk"), "Risk with these keys (original data)");
  };
  $$(".addremove", el).forEach((b) => b.onclick = async () => {
    setState(await api("/api/steps", { method: "POST", body: { action: "add", step: { method: "remove", variables: [b.dataset.col] } } }));
    b.disabled = true; b.textContent = "remove step added";
  });
  if ((roles.key_vars || []).length) renderRiskInto($("#rolerisk"), await api("/api/risk"), "Risk with these keys (original data)");
}

/* ------------------------------------------------------------------ 3 risk */
async function renderRisk(el) {
  el.innerHTML = `<h2>Risk at a glance</h2><div class="row"><div class="card" id="risk-orig"></div><div class="card" id="risk-after"></div></div>`;
  const [orig, res] = await Promise.all([api("/api/risk"), getResults()]);
  renderRiskInto($("#risk-orig"), orig, "Original data");
  renderRiskInto($("#risk-after"), res.risk_after, `After ${res.n_steps} step${res.n_steps === 1 ? "" : "s"}`);
}

function renderRiskInto(el, r, title) {
  if (!r || r.empty) { el.innerHTML = `<h3>${esc(title)}</h3><div class="muted">${esc((r && r.empty) || "no key variables")}</div>`; return; }
  el.innerHTML = `<h3>${esc(title)}</h3><table class="kv">
    <tr><th>key variables</th><td>${r.keys.map(esc).join(", ")}</td></tr>
    <tr><th>records</th><td>${fmt(r.n_records)}</td></tr>
    <tr><th>key combinations</th><td>${fmt(r.n_combinations)}</td></tr>
    <tr><th>sample uniques (f<sub>k</sub> = 1)</th><td class="risk-uniques">${fmt(r.n_sample_uniques)}</td></tr>
    ${Object.entries(r.k_violations).map(([k, v]) => `<tr><th>records with f<sub>k</sub> &lt; ${k}</th><td>${fmt(v)}</td></tr>`).join("")}
    <tr><th>k reached</th><td>${fmt(r.k_reached)}</td></tr>
    <tr><th>global risk (ER / n)</th><td class="risk-global">${pct(r.global_risk)}</td></tr>
    <tr><th>expected re-identifications</th><td>${fmt(r.expected_reidentifications)}</td></tr>
    <tr><th>largest individual risk</th><td>${fmt(r.max_individual_risk)}</td></tr>
    ${r.household_risk !== undefined ? `<tr><th>household risk</th><td>${pct(r.household_risk)}</td></tr>` : ""}
    ${r.linkage ? `<tr><th>all-columns linkage</th><td class="risk-linkage">${pct(r.linkage.correct_link_share)} of records re-identified by exact matching on all ${r.linkage.columns} columns
      <span class="muted">(${fmt(r.linkage.sample_uniques)} records unique on them)</span></td></tr>` : ""}
    ${r.suda ? `<tr><th>SUDA2</th><td>${fmt(r.suda.n_scored)} records with MSUs, ${fmt(r.suda.n_msu)} MSUs, sum DIS ${fmt(r.suda.sum_dis)}</td></tr>` : `<tr><th>SUDA2</th><td class="muted">${esc(r.suda_note || "")}</td></tr>`}
    </table><div class="charts"></div>`;
  const ch = $(".charts", el);
  chart(chartDiv(ch, "records by f_k"), { width: 250, height: 140, data: { values: r.fk_distribution },
    mark: { type: "bar", color: "#2f6fad" }, encoding: { x: { field: "class", sort: { field: "order" }, title: "f_k" },
      y: { field: "records", type: "quantitative" }, tooltip: [{ field: "class" }, { field: "records" }] } });
  chart(chartDiv(ch, "individual risk"), { width: 250, height: 140, data: { values: r.risk_histogram },
    mark: { type: "bar", color: "#c0504d" }, encoding: { x: { field: "band", sort: { field: "order" }, title: "risk" },
      y: { field: "records", type: "quantitative", }, tooltip: [{ field: "band" }, { field: "records" }] } });
  if (r.household_histogram) chart(chartDiv(ch, "household risk"), { width: 250, height: 140, data: { values: r.household_histogram },
    mark: { type: "bar", color: "#8064a2" }, encoding: { x: { field: "band", sort: { field: "order" }, title: "household risk" },
      y: { field: "records", type: "quantitative" } } });
  if (r.suda) chart(chartDiv(ch, "contribution to uniqueness (SUDA2)"), { width: 250, height: 20 * r.suda.contributions.length,
    data: { values: r.suda.contributions }, mark: { type: "bar", color: "#4bacc6" },
    encoding: { y: { field: "variable", sort: "-x", title: null }, x: { field: "percent", type: "quantitative", title: "% of MSUs" },
      tooltip: [{ field: "variable" }, { field: "percent", format: ".1f" }] } });
}

/* ------------------------------------------------------------------ 4 steps: generated forms */
async function loadMethods() {
  if (!S.methods) { const m = await api("/api/methods"); S.methods = m.methods; S.gateChecks = m.gate_checks; }
}

function fieldInput(p, value) {
  const cols = S.state.columns;
  const name = `name="${esc(p.name)}" data-kind="${esc(p.kind)}"`;
  const v = value === undefined ? null : value;
  const listy = Array.isArray(p.default) || Array.isArray(v);
  switch (p.kind) {
    case "int": case "float":
      return `<input type="number" ${name} step="${p.kind === "int" ? 1 : "any"}" ${p.low !== undefined ? `min="${p.low}"` : ""}
        ${p.high !== undefined ? `max="${p.high}"` : ""} value="${v === null ? "" : esc(v)}" placeholder="${p.default === null ? "" : esc(p.default)}">`;
    case "bool":
      return `<input type="checkbox" ${name} ${(v === null ? p.default : v) ? "checked" : ""}>`;
    case "choice":
      return `<select ${name}>${p.required ? "" : `<option value="">(default: ${esc(p.default)})</option>`}${p.choices.map((c) =>
        `<option ${v === c ? "selected" : ""}>${esc(c)}</option>`).join("")}</select>`;
    case "column":
      return `<select ${name}><option value="">${p.required ? "(choose)" : "(default)"}</option>${cols.map((c) =>
        `<option ${v === c ? "selected" : ""}>${esc(c)}</option>`).join("")}</select>`;
    case "columns": {
      const sel = v === null ? [] : (Array.isArray(v) ? v : [v]);
      return `<select multiple ${name}>${cols.map((c) => `<option ${sel.includes(c) ? "selected" : ""}>${esc(c)}</option>`).join("")}</select>`;
    }
    case "int_list": case "float_list": case "str_list":
      return `<input type="text" ${name} value="${v === null ? "" : esc((v || []).join(", "))}" placeholder="comma separated">`;
    case "mapping": case "any":
      return `<textarea ${name} placeholder="JSON, e.g. {&quot;a&quot;: [1, 2]} or [&quot;x&quot;]">${v === null ? "" : esc(JSON.stringify(v))}</textarea>` +
        (p.name === "mapping" ? `<button type="button" class="tiny secondary grouper" data-for="${esc(p.name)}">group the categories…</button><div class="groups"></div>` : "");
    default: // str, path and inferred kinds: text; a JSON list or object is read as such
      return `<input type="text" ${name} value="${v === null ? "" : esc(typeof v === "string" ? v : JSON.stringify(v))}"
        placeholder="${listy ? "a name, or a JSON list [&quot;a&quot;, &quot;b&quot;]" : (p.default === null ? "" : esc(p.default))}">`;
  }
}

function formHtml(m, values = {}) {
  const one = (p) => `<div class="field"><label for="">${esc(p.name)}${p.symbol ? `<span class="sym">${esc(p.symbol)}</span>` : ""}${p.required ? " *" : ""}</label>
    <div>${fieldInput(p, values[p.name])}</div><div class="help">${esc(p.help || "")}${p.help ? " · " : ""}${esc(p.rule)}${p.unit ? " (" + esc(p.unit) + ")" : ""}</div></div>`;
  const basic = m.params.filter((p) => !p.advanced), adv = m.params.filter((p) => p.advanced);
  return `<div class="form" data-method="${esc(m.name)}"><p class="muted">${esc(m.summary)}</p>${basic.map(one).join("")}
    ${adv.length ? `<details><summary>more options</summary>${adv.map(one).join("")}</details>` : ""}</div>`;
}

function parseLoose(text) {
  const t = text.trim();
  if (t === "") return null;
  if (/^[\[{"]/.test(t) || /^(true|false|null|-?\d+(\.\d+)?)$/.test(t)) { try { return JSON.parse(t); } catch (e) { /* text */ } }
  return t;
}

function readForm(formEl, m) {
  const step = { method: m.name };
  for (const p of m.params) {
    const el = formEl.querySelector(`[name="${CSS.escape(p.name)}"]`);
    if (!el) continue;
    let v = null;
    switch (p.kind) {
      case "int": v = el.value === "" ? null : parseInt(el.value, 10); break;
      case "float": v = el.value === "" ? null : parseFloat(el.value); break;
      case "bool": v = el.checked; if (v === !!p.default) v = null; break;
      case "choice": case "column": v = el.value || null; break;
      case "columns": v = Array.from(el.selectedOptions).map((o) => o.value); if (!v.length) v = null; break;
      case "int_list": case "float_list": case "str_list": {
        const parts = el.value.split(",").map((x) => x.trim()).filter((x) => x !== "");
        v = parts.length ? parts.map((x) => p.kind === "str_list" ? x : Number(x)) : null; break;
      }
      case "mapping": case "any": {
        const t = el.value.trim();
        if (t) { try { v = JSON.parse(t); } catch (e) { v = parseLoose(t); } }
        break;
      }
      default: v = parseLoose(el.value);
    }
    if (v === null) continue;
    if (JSON.stringify(v) === JSON.stringify(p.default)) continue;
    step[p.name] = v;
  }
  return step;
}

async function renderSteps(el) {
  await loadMethods();
  const steps = S.state.spec.steps || [];
  el.innerHTML = `<h2>Steps</h2><div class="row">
    <div class="card" style="flex:1 1 430px;max-width:560px" id="addcard"><h3>Add a step</h3>
      <select id="methodsel"><option value="">choose a method…</option>${S.methods.map((m) =>
        `<option value="${esc(m.name)}">${esc(m.name)} — ${esc(m.summary.slice(0, 60))}</option>`).join("")}</select>
      <div id="stepform"></div><p><button id="addstep" disabled>Add step</button> <button id="savestep" class="secondary" hidden>Save changes</button></p></div>
    <div style="flex:2 1 620px" id="stepresults"><div class="card muted">running the steps…</div></div></div>`;
  let editing = null;
  const sel = $("#methodsel", el);
  const showForm = (name, values) => {
    const m = S.methods.find((x) => x.name === name);
    $("#stepform").innerHTML = m ? formHtml(m, values || {}) : "";
    $("#addstep").disabled = !m;
    $$("#stepform .grouper").forEach((b) => b.onclick = () => groupCategories(b));
  };
  sel.onchange = () => { editing = null; $("#savestep").hidden = true; $("#addstep").hidden = false; showForm(sel.value); };
  const submit = async (action) => {
    const m = S.methods.find((x) => x.name === sel.value);
    const step = readForm($("#stepform .form"), m);
    setState(await api("/api/steps", { method: "POST", body: { action, index: editing, step } }));
    go("steps");
  };
  $("#addstep").onclick = () => submit("add");
  $("#savestep").onclick = () => submit("update");
  const res = await getResults();
  const box = $("#stepresults");
  box.innerHTML = "";
  if (res.error) box.insertAdjacentHTML("beforeend", `<div class="card fail">${esc(res.error)}</div>`);
  if (!steps.length) box.insertAdjacentHTML("beforeend", `<div class="card empty">No steps yet: add one from the menu.</div>`);
  steps.forEach((st, i) => {
    const v = res.steps[i];
    const card = document.createElement("div");
    card.className = "card stepcard" + (res.failed_step === i ? " failed" : "");
    const params = Object.entries(st).filter(([k]) => k !== "method").map(([k, x]) => `${k} = ${JSON.stringify(x)}`).join(" · ");
    card.innerHTML = `<div class="stephead"><span class="title">${i + 1}. ${esc(st.method)}</span>
      <span class="acts"><button class="tiny secondary" data-a="up">↑</button><button class="tiny secondary" data-a="down">↓</button>
      <button class="tiny secondary" data-a="edit">edit</button><button class="tiny danger" data-a="delete">remove</button></span></div>
      <div class="params">${esc(params || "defaults")}</div><div class="body"></div>`;
    $$("button", card).forEach((b) => b.onclick = async () => {
      if (b.dataset.a === "edit") {
        editing = i; sel.value = st.method; showForm(st.method, st);
        $("#savestep").hidden = false; $("#addstep").hidden = true; $("#addcard").scrollIntoView(); return;
      }
      setState(await api("/api/steps", { method: "POST", body: { action: b.dataset.a, index: i } })); go("steps");
    });
    box.appendChild(card);
    if (v) renderStepBody($(".body", card), v);
  });
  if (res.gate && res.gate.length) {
    box.insertAdjacentHTML("beforeend", `<div class="card"><h3>Gate</h3>${gateHtml(res.gate, res.verdict)}</div>`);
  }
}

/* the recode helper: one "new category" box per value of the chosen variable; it writes the
   mapping {new label: [values]} into the form's JSON field */
async function groupCategories(btn) {
  const form = btn.closest(".form");
  const varEl = form.querySelector('[name="variable"]');
  const col = varEl ? parseLoose(varEl.value) : null;
  if (!col) { showError("choose the variable first"); return; }
  const r = await api("/api/categories?column=" + encodeURIComponent(col));
  const box = btn.nextElementSibling;
  const area = form.querySelector(`[name="${CSS.escape(btn.dataset.for)}"]`);
  let current = {};
  try { current = JSON.parse(area.value || "{}"); } catch (e) { current = {}; }
  const labelOf = (v) => { for (const [k, vs] of Object.entries(current)) if (vs.map(String).includes(String(v))) return k; return ""; };
  box.innerHTML = `<table class="grid small"><tr><th>value</th><th>label</th><th>records</th><th>new category</th></tr>${r.values.map((x, i) =>
    `<tr><td>${esc(x.value)}</td><td>${esc(x.label || "")}</td><td>${fmt(x.records)}</td>
     <td><input type="text" data-i="${i}" value="${esc(labelOf(x.value))}" placeholder="keep" style="width:110px"></td></tr>`).join("")}</table>
     <p class="small muted">Values given the same new category are merged into it; the values left empty follow the "others" setting.</p>`;
  const write = () => {
    const mapping = {};
    $$("input[data-i]", box).forEach((inp) => {
      const t = inp.value.trim(), v = r.values[+inp.dataset.i].value;
      if (t) (mapping[t] = mapping[t] || []).push(v);
    });
    area.value = JSON.stringify(mapping);
    const others = form.querySelector('[name="others"]');
    const someKept = $$("input[data-i]", box).some((inp) => !inp.value.trim());
    if (others && someKept && !others.value.trim()) { others.value = "keep"; others.dataset.auto = "1"; }
    if (others && !someKept && others.dataset.auto === "1" && others.value === "keep") { others.value = ""; delete others.dataset.auto; }
  };
  $$("input[data-i]", box).forEach((inp) => inp.oninput = write);
}

function gateHtml(gate, verdict) {
  const ok = gate.every((g) => g.passed);
  const unchecked = verdict && verdict.startsWith("NOT CHECKED");
  return `<div class="verdict ${ok && !unchecked ? "ok" : "fail"}">${unchecked ? esc(verdict) : (ok ? "✔ the release passes its gate" : "✘ the gate fails")}</div>
    <table class="grid"><tr><th>threshold</th><th>set</th><th>measured</th><th>verdict</th><th>detail</th></tr>
    ${gate.map((g) => `<tr><td>${esc(g.name)}</td><td>${esc(summaryValue(g.threshold))}</td><td class="small">${esc(summaryValue(g.value))}</td>
      <td class="${g.passed ? "ok" : "fail"}">${g.passed ? "passed" : "FAILED"}</td><td class="small">${esc(g.detail)}</td></tr>`).join("")}</table>`;
}

function summaryValue(v) {
  if (v !== null && typeof v === "object") { const s = JSON.stringify(v); return s.length > 160 ? s.slice(0, 160) + "…" : s; }
  return fmt(v);
}

function renderStepBody(el, v) {
  let h = "";
  const sm = Object.entries(v.summary || {});
  if (sm.length) h += `<table class="kv small">${sm.slice(0, 14).map(([k, x]) => `<tr><th>${esc(k)}</th><td>${esc(summaryValue(x))}</td></tr>`).join("")}</table>`;
  if (v.guarantees.length) h += `<h4>Guarantees</h4><ul class="guarantees">${v.guarantees.map((g) =>
    `<li class="${g.holds ? "ok" : "fail"}">${g.holds ? "✔" : "✘"} ${esc(g.statement)} <span class="muted">(measured: ${esc(summaryValue(g.value))})</span></li>`).join("")}</ul>`;
  if (v.risk_after && !v.risk_after.empty) {
    const r = v.risk_after;
    h += `<h4>Risk after this step</h4><div class="small">sample uniques <b>${fmt(r.n_sample_uniques)}</b> · f<sub>k</sub> &lt; 3: <b>${fmt(r.k_violations["3"])}</b> ·
      k reached <b>${fmt(r.k_reached)}</b> · global risk <b>${pct(r.global_risk)}</b> · largest individual risk ${fmt(r.max_individual_risk)}</div>`;
  }
  if (v.removed_columns.length) h += `<p class="small">removed: ${v.removed_columns.map(esc).join(", ")}</p>`;
  h += `<div class="charts"></div>`;
  el.innerHTML = h;
  const ch = $(".charts", el);
  for (const [col, f] of Object.entries(v.frequencies)) {
    chart(chartDiv(ch, `${col}: before / after ` + (f.hellinger === null ? "(categories recoded)" : `(Hellinger ${fmt(f.hellinger, 3)}, TVD ${fmt(f.tvd, 3)})`)), {
      width: Math.min(360, 24 * f.shown + 40), height: 130, data: { values: f.bars }, mark: "bar",
      encoding: { x: { field: "category", type: "nominal", sort: null, title: null }, xOffset: { field: "when", sort: ["before", "after"] },
        y: { field: "records", type: "quantitative" }, color: { field: "when", sort: ["before", "after"], scale: { range: ["#9fb6cd", "#2f6fad"] }, legend: { orient: "top", title: null } },
        tooltip: [{ field: "category" }, { field: "when" }, { field: "records" }] } });
  }
  if (v.numeric) {
    const t = document.createElement("div");
    t.innerHTML = `<h4>Numeric variables</h4><table class="grid small"><tr><th>variable</th><th>statistic</th><th>before</th><th>after</th></tr>
      ${v.numeric.moments.map((m) => `<tr><td>${esc(m.variable)}</td><td>${m.statistic}</td><td>${fmt(m.before)}</td><td>${fmt(m.after)}</td></tr>`).join("")}</table>`;
    ch.appendChild(t);
    if (v.numeric.correlations.length) chart(chartDiv(ch, "change of the correlation matrix"), {
      width: 200, height: 200, data: { values: v.numeric.correlations }, mark: "rect",
      encoding: { x: { field: "col", title: null }, y: { field: "row", title: null },
        color: { field: "change", type: "quantitative", scale: { scheme: "redblue", domainMid: 0 } },
        tooltip: [{ field: "row" }, { field: "col" }, { field: "before", format: ".3f" }, { field: "after", format: ".3f" }] } });
  }
  for (const m of v.matrices) {
    if (!m.cells) { ch.insertAdjacentHTML("beforeend", `<div class="small">${esc(m.title)}: ${esc(m.note)}</div>`); continue; }
    chart(chartDiv(ch, `PRAM matrix: ${m.title} (min diagonal ${fmt(m.min_diagonal, 3)})`), {
      width: 180, height: 180, data: { values: m.cells },
      layer: [{ mark: "rect", encoding: { x: { field: "to", sort: null }, y: { field: "from", sort: null },
                 color: { field: "p", type: "quantitative", scale: { scheme: "blues", domain: [0, 1] } } } },
              { mark: { type: "text", fontSize: 10 }, encoding: { x: { field: "to", sort: null }, y: { field: "from", sort: null },
                 text: { field: "p", format: ".2f" }, color: { condition: { test: "datum.p > 0.5", value: "white" }, value: "black" } } }] });
  }
}

/* ------------------------------------------------------------------ 5 compare */
async function renderCompare(el) {
  const h = S.state.history;
  const opts = (sel) => h.branches.map((b) => `<option ${b === sel ? "selected" : ""}>${esc(b)}</option>`).join("");
  const other = h.branches.find((b) => b !== h.branch) || h.branch;
  el.innerHTML = `<h2>Compare two alternatives</h2><div class="card">
    <p class="small muted">Each branch is a line of history. Start one with “+ branch” in the header, change its steps, then compare.</p>
    <select id="ca">${opts(h.branch)}</select> versus <select id="cb">${opts(other)}</select> <button id="docompare">Compare</button></div>
    <div id="cmpout" class="row"></div>`;
  $("#docompare").onclick = async () => {
    const a = $("#ca").value, b = $("#cb").value;
    const r = await api(`/api/compare?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`);
    const out = $("#cmpout"); out.innerHTML = "";
    for (const name of [a, b]) {
      const x = r.results[name];
      const card = document.createElement("div"); card.className = "card";
      card.innerHTML = `<h3>${esc(name)}</h3><p class="params">${esc(x.steps.join(" → ") || "no steps")}</p>
        ${x.error ? `<p class="fail">${esc(x.error)}</p>` : ""}
        <p>utility (entropy kept on the keys): <b>${fmt(x.utility_entropy)}</b></p>${x.gate.length ? gateHtml(x.gate) : ""}<div class="rk"></div>`;
      out.appendChild(card);
      renderRiskInto($(".rk", card), x.risk, "risk after");
    }
  };
  if (h.branches.length > 1) $("#docompare").click();
}

/* ------------------------------------------------------------------ 6 explore */
async function renderExplore(el) {
  await loadMethods();
  const numeric = (m) => m.params.filter((p) => p.kind === "int" || p.kind === "float");
  el.innerHTML = `<h2>Explore</h2><div class="row"><div class="card" style="max-width:620px">
    <p class="small muted">Each candidate is a method with a list of values for one parameter, added after the current steps.
      Risk: record linkage of the keys; utility: entropy kept. Runs in the background.</p>
    <div id="cands"></div><p><button class="secondary" id="addcand">+ candidate</button></p>
    <p>threshold <input type="number" id="xthr" value="0.03" step="any" style="width:90px"> seeds <input type="text" id="xseeds" value="1, 2" style="width:80px">
      <button id="runx">Run sweep</button> <button id="cancelx" class="danger" hidden>Cancel</button></p>
    <div id="xprog"></div></div><div class="card"><h3>R-U map</h3><div id="rumap" class="muted">run a sweep; then click a point to add that step</div><div id="xprop"></div></div></div>`;
  const addCand = (method = "local_suppression", param = "k", values = "2, 3, 5, 10", fixed = "") => {
    const d = document.createElement("div"); d.className = "cand";
    d.innerHTML = `<select class="cm">${S.methods.map((m) => `<option ${m.name === method ? "selected" : ""}>${esc(m.name)}</option>`).join("")}</select>
      <select class="cp"></select> values <input type="text" class="cv" value="${esc(values)}" style="width:130px">
      fixed <input type="text" class="cf" value="${esc(fixed)}" placeholder='{"variables": ["x"]}' style="width:170px">
      <button class="tiny danger">×</button>`;
    const fill = () => { const m = S.methods.find((x) => x.name === $(".cm", d).value);
      $(".cp", d).innerHTML = numeric(m).map((p) => `<option ${p.name === param ? "selected" : ""}>${esc(p.name)}</option>`).join(""); };
    $(".cm", d).onchange = fill; fill(); $("button", d).onclick = () => d.remove();
    $("#cands").appendChild(d);
  };
  addCand();
  addCand("pram", "min_diagonal", "0.6, 0.8, 0.9", '{"variables": ["Marital Status"]}'.replace("Marital Status", (S.state.spec.roles.key_vars || ["x"]).slice(-2)[0] || "x"));
  $("#addcand").onclick = () => addCand();
  $("#runx").onclick = async () => {
    const candidates = $$(".cand").map((d) => {
      const p = $(".cp", d).value;
      const values = $(".cv", d).value.split(",").map((x) => x.trim()).filter((x) => x).map(Number);
      const f = $(".cf", d).value.trim();
      return { method: $(".cm", d).value, grid: p ? { [p]: values } : {}, fixed: f ? JSON.parse(f) : {} };
    });
    const job = await api("/api/explore", { method: "POST", body: { candidates, threshold: parseFloat($("#xthr").value),
      seeds: $("#xseeds").value.split(",").map((x) => parseInt(x, 10)).filter((x) => !isNaN(x)) } });
    pollJob(job.id, $("#xprog"), $("#cancelx"), (res) => { S.explore = res; drawRU(res); });
  };
  if (S.explore) drawRU(S.explore);
}

function pollJob(id, progEl, cancelBtn, done) {
  if (cancelBtn) { cancelBtn.hidden = false; cancelBtn.onclick = () => api(`/api/jobs/${id}/cancel`, { method: "POST" }); }
  const tick = async () => {
    let j;
    try { j = await fetch(`/api/jobs/${id}`, { credentials: "same-origin" }).then((r) => r.json()); } catch (e) { return; }
    const share = j.total ? j.done / j.total : 0;
    progEl.innerHTML = `<span class="progress"><div style="width:${(100 * share).toFixed(0)}%"></div></span>
      <span class="small"> ${j.done}/${j.total || "?"} ${esc(j.status)}${j.eta_seconds !== null ? ` · about ${Math.ceil(j.eta_seconds)} s left` : ""} · ${esc(j.message || "")}</span>`;
    if (j.status === "running" || j.status === "queued") { setTimeout(tick, 300); return; }
    if (cancelBtn) cancelBtn.hidden = true;
    if (j.status === "failed") { showError(j.error); progEl.insertAdjacentHTML("beforeend", `<div class="fail">${esc(j.error)}</div>`); }
    if (j.status === "done") done(j.result);
  };
  tick();
}

function drawRU(res) {
  const el = $("#rumap");
  if (!el) return;
  el.innerHTML = ""; el.classList.remove("muted");
  const pts = res.points.map((p) => ({ ...p, params_text: JSON.stringify(p.params) }));
  const spec = { width: 430, height: 300, data: { values: pts },
    layer: [
      { mark: { type: "point", filled: true, size: 80, cursor: "pointer" }, params: [{ name: "pick", select: { type: "point", on: "click" } }],
        encoding: { x: { field: "risk", type: "quantitative", title: `risk (${res.risk})` },
          y: { field: "utility", type: "quantitative", title: `utility (${res.utility})`, scale: { zero: false } },
          color: { field: "method" }, tooltip: [{ field: "method" }, { field: "label" }, { field: "risk", format: ".4f" }, { field: "utility", format: ".4f" }] } },
      { data: { values: [{ t: res.threshold }] }, mark: { type: "rule", strokeDash: [5, 4], color: "#c62828" }, encoding: { x: { field: "t", type: "quantitative" } } }] };
  spec.$schema = "https://vega.github.io/schema/vega-lite/v5.json";
  vegaEmbed(el, spec, { actions: false, renderer: "svg" }).then((r) => {
    r.view.addEventListener("click", async (ev, item) => {
      if (!item || !item.datum || item.datum.method === undefined) return;
      const d = item.datum;
      if (!confirm(`Add ${d.method} (${d.label}) as the next step?`)) return;
      setState(await api("/api/explore/load", { method: "POST", body: { method: d.method, params: d.params } }));
      location.hash = "#steps";
    });
  });
  $("#xprop").innerHTML = res.proposal ? `<p>Best under the threshold ${fmt(res.threshold)}: <b>${esc(res.proposal.method)}</b>
    ${esc(JSON.stringify(res.proposal.params))} (risk ${fmt(res.proposal.risk)}, utility ${fmt(res.proposal.utility)}).
    Original risk ${fmt(res.original_risk)}.</p>` : `<p class="fail">No setting is below the threshold.</p>`;
}

/* ------------------------------------------------------------------ 7 gate and release */
async function renderRelease(el) {
  await loadMethods();
  const gate = S.state.spec.gate || {}, out = S.state.spec.output || {};
  el.innerHTML = `<h2>Gate and release</h2><div class="card"><h3>Gate thresholds</h3><div id="gateverdict"></div>
    <table class="grid gatetable"><tr><th>threshold</th><th>value</th><th>what it checks</th></tr>${S.gateChecks.map((g) => `<tr><td><b>${esc(g.name)}</b></td>
      <td><input type="text" data-gate="${esc(g.name)}" value="${gate[g.name] === undefined ? "" : esc(JSON.stringify(gate[g.name]))}" style="width:110px"></td>
      <td class="small muted">${esc(g.description)}</td></tr>`).join("")}</table>
    <p><button id="savegate">Save thresholds</button></p></div>
    <div class="row"><div class="card"><h3>Release</h3><div class="form">
      <div class="field"><label>folder</label><div><input type="text" id="outdir" value="${esc(out.directory || "")}" style="width:100%"></div></div>
      <div class="field"><label>data file name</label><div><input type="text" id="outdata" value="${esc(out.data || "")}"></div>
        <div class="help">its suffix sets the format (.csv, .parquet, .sav, .dta)</div></div></div>
      <p><button id="saveout" class="secondary">Save folder</button> <button id="dorelease">Release</button> <button id="cancelrel" class="danger" hidden>Cancel</button></p><div id="relprog"></div><div id="relout"></div></div>
    <div class="card"><h3>Release spec</h3><p class="small">The session as a TOML spec: <code>sdckit protect release.toml</code> writes the same files.</p>
      <label class="small"><input type="checkbox" id="withseed" checked> include the run seed (needed to rerun byte for byte; a secret)</label>
      <p><a id="exportlink" class="btn" href="/api/export?seed=1" download="release.toml">Export spec</a></p>
      <p class="small">Continue a session from a spec: <input type="file" id="importspec" accept=".toml"></p></div></div>
    <div id="reports"></div>`;
  $("#withseed").onchange = (e) => { $("#exportlink").href = "/api/export?seed=" + (e.target.checked ? 1 : 0); };
  $("#savegate").onclick = async () => {
    const g = {};
    $$("[data-gate]").forEach((i) => { const t = i.value.trim(); if (t) g[i.dataset.gate] = parseLoose(t); });
    setState(await api("/api/gate", { method: "POST", body: { gate: g } })); go("release");
  };
  $("#saveout").onclick = async () => { setState(await api("/api/output", { method: "POST", body: { directory: $("#outdir").value, data: $("#outdata").value } })); };
  $("#dorelease").onclick = async () => {
    if ($("#outdir").value !== (out.directory || "") || $("#outdata").value !== (out.data || "")) await $("#saveout").onclick();
    const job = await api("/api/release", { method: "POST", body: {} });
    pollJob(job.id, $("#relprog"), $("#cancelrel"), (r) => {
      $("#relout").innerHTML = `<p class="verdict ok" id="released">✔ released to ${esc(r.directory)}</p>
        <p class="small">files: ${r.files.map(esc).join(", ")}</p><p><a class="btn secondary" target="_blank" href="/release/${r.index}/report">open the public report</a></p>`;
      $("#reports").innerHTML = `<div class="card"><h3>Public report</h3><iframe class="report" src="/release/${r.index}/report"></iframe></div>`;
    });
  };
  $("#importspec").onchange = async (ev) => {
    const f = ev.target.files[0]; if (!f) return;
    setState(await api("/api/import", { method: "POST", raw: await f.text(), headers: { "Content-Type": "application/toml" } }));
    S.variables = null; S.suggestions = null; go("steps");
  };
  const res = await getResults();
  $("#gateverdict").innerHTML = res.gate.length ? gateHtml(res.gate, res.verdict) : (res.verdict ? `<div class="verdict fail">${esc(res.verdict)}</div>` : `<p class="muted">no thresholds set: a release needs at least one you can defend (or none = "why").</p>`);
}

/* ------------------------------------------------------------------ 8 tables */
async function renderTables(el) {
  const cols = (S.state && S.state.has_data) ? S.state.columns : [];
  const opt = (sel) => `<option value="">—</option>` + cols.map((c) => `<option ${c === sel ? "selected" : ""}>${esc(c)}</option>`).join("");
  const keys = (S.state && S.state.has_data && S.state.spec.roles.key_vars) || [];
  el.innerHTML = `<h2>Tables</h2><div class="row"><div class="card" style="max-width:560px"><div class="form">
    <div class="field"><label>source</label><div><label><input type="radio" name="tsrc" value="micro" checked> the open microdata</label>
      <label><input type="radio" name="tsrc" value="cells"> a cell list (CSV) <input type="file" id="tfile" accept=".csv"></label></div></div>
    <div class="field"><label>rows</label><div><select id="td1">${opt(keys[0])}</select> <input type="text" id="td1t" placeholder="(cell list: column)" style="width:140px"></div></div>
    <div class="field"><label>columns</label><div><select id="td2">${opt(keys[1])}</select> <input type="text" id="td2t" placeholder="(cell list: column)" style="width:140px"></div></div>
    <div class="field"><label>response</label><div><select id="tresp">${opt("")}</select> <input type="text" id="tval" placeholder="(cell list: value column)" style="width:160px"></div>
      <div class="help">empty: a frequency table (counts)</div></div>
    <div class="field"><label>rules</label><div>threshold n <input type="number" id="rthr" value="3" style="width:60px">
      p% <input type="number" id="rp" placeholder="off" style="width:60px"> dominance (n,k) <input type="text" id="rdom" placeholder="off, e.g. 1,80" style="width:80px"></div></div>
    <div class="field"><label>protection</label><div><select id="tmeth"><option>optimal</option><option>modular</option><option>heuristic</option><option>rounding</option><option value="ckm">cell key method</option></select>
      rounding base <input type="number" id="tbase" value="3" style="width:60px"></div></div>
    <div class="field" id="ckmfields"><label>cell key method</label><div>p-table: <label><input type="radio" name="tpt" value="gen" checked> from D <input type="number" id="tD" value="5" style="width:50px">
      V <input type="number" id="tV" value="3" step="0.1" style="width:60px"> js <input type="number" id="tjs" value="2" style="width:50px"></label><br>
      <label><input type="radio" name="tpt" value="file"> from a tau-Argus file <input type="file" id="tptab" accept=".txt,.csv"></label> <span id="tptinfo" class="small muted"></span><br>
      record key column <input type="text" id="tkey" value="Key" style="width:80px"></div>
      <div class="help">ignores the rules; every cell, totals included, is perturbed from its cell key (record keys drawn from the session seed when the column is absent)</div></div></div>
    <p><button id="tprotect">Protect table</button> <button id="canceltab" class="secondary" hidden>cancel</button></p><div id="tprog"></div></div><div class="card" id="tout"><div class="muted">build and protect a table</div></div></div>`;
  $("#tfile").onchange = async (ev) => {
    const f = ev.target.files[0]; if (!f) return;
    const r = await api("/api/upload?kind=table", { method: "POST", raw: f, headers: { "X-Filename": f.name } });
    S.tableFile = r.table_file; $$("input[name=tsrc]")[1].checked = true;
  };
  $("#tptab").onchange = async (ev) => {
    const f = ev.target.files[0]; if (!f) return;
    const r = await api("/api/upload?kind=ptable", { method: "POST", raw: f, headers: { "X-Filename": f.name } });
    S.ptableFile = r.ptable_file; $$("input[name=tpt]")[1].checked = true; $("#tmeth").value = "ckm";
    $("#tptinfo").textContent = r.ptable;
  };
  $("#tprotect").onclick = async () => {
    const cells = $$("input[name=tsrc]")[1].checked;
    const dims = (cells ? [$("#td1t").value, $("#td2t").value] : [$("#td1").value, $("#td2").value]).filter((x) => x);
    const rules = [];
    if ($("#rthr").value) rules.push({ type: "threshold", n: parseInt($("#rthr").value, 10) });
    if ($("#rp").value) rules.push({ type: "p%", p: parseFloat($("#rp").value) });
    if ($("#rdom").value) { const [n, k] = $("#rdom").value.split(",").map(Number); rules.push({ type: "dominance", n, k }); }
    const body = { dims, rules, method: $("#tmeth").value, options: { base: parseInt($("#tbase").value, 10) } };
    if (body.method === "ckm") {
      body.rules = [];
      body.options = { key: $("#tkey").value };
      if ($$("input[name=tpt]")[1].checked) body.options.ptable_file = S.ptableFile;
      else Object.assign(body.options, { D: parseInt($("#tD").value, 10), V: parseFloat($("#tV").value), js: parseInt($("#tjs").value, 10) });
    }
    if (cells) { body.table_file = S.tableFile; body.value = $("#tval").value; } else body.response = $("#tresp").value;
    const r = await api("/api/table", { method: "POST", body });
    // suppression and rounding (a MILP each) run as a job with progress; the cell key method answers at once
    if (r.grid) { $("#tprog").innerHTML = ""; drawTable(r); } else pollJob(r.id, $("#tprog"), $("#canceltab"), drawTable);
  };
}

function drawTable(r) {
  const g = r.grid, sup = (c) => c.status === "primary" || c.status === "secondary";
  const s = r.summary;
  $("#tout").innerHTML = `<h3>${esc(r.dims.join(" × "))} <span class="tag">${esc(r.kind)}</span> <span class="tag">${esc(s.method)}</span></h3>
    <table class="kv small">${Object.entries(s).map(([k, v]) => `<tr><th>${esc(k)}</th><td>${esc(fmt(v))}</td></tr>`).join("")}</table>
    <ul class="guarantees">${r.guarantees.map((x) => `<li class="${x.holds ? "ok" : "fail"}">${x.holds ? "✔" : "✘"} ${esc(x.statement)}</li>`).join("")}</ul>
    ${s.method === "ckm" ? `<p class="ckmnote">${esc(r.describe)}</p>
      <p class="legend"><span class="perturbed" style="background:#e9e3fb">n<sup>p</sup> perturbed (changed by the p-table; hover for the original)</span></p>`
    : `<p class="legend"><span class="primary" style="background:#f9c9c6">x primary</span><span style="background:#fde3b5">x secondary</span>${s.method === "rounding" ? `<span style="background:#e6eefc">rounded</span>` : ""}</p>`}
    <div style="overflow:auto;max-height:520px"><table class="tgrid" id="tablegrid"><tr><th></th>${g.cols.map((c) => `<th>${esc(c)}</th>`).join("")}</tr>
    ${g.rows.map((row, i) => `<tr><th>${esc(row)}</th>${g.cells[i].map((c) => `<td class="${c.status}" title="cell ${c.cell}, ${c.freq} contributors${c.original !== undefined ? `, original ${fmt(c.original)}` : ""}">${sup(c) ? "x" : fmt(c.value)}${c.status === "perturbed" ? "<sup>p</sup>" : ""}</td>`).join("")}</tr>`).join("")}</table></div>
    ${r.audit.length ? `<h4>Audit: interval an attacker can derive for each ${s.method === "rounding" ? "" : "suppressed "}cell</h4>
      <div style="overflow:auto;max-height:300px"><table class="grid small"><tr><th>cell</th><th>lower</th><th>upper</th><th>protected</th></tr>
      ${r.audit.map((a) => `<tr><td>${esc(a.codes)}</td><td>${fmt(a.lower)}</td><td>${fmt(a.upper)}</td><td class="${a.protected ? "ok" : "fail"}">${a.protected ? "yes" : "NO"}</td></tr>`).join("")}</table></div>` : ""}`;
}

/* ------------------------------------------------------------------ header */
$("#undo").onclick = async () => { setState(await api("/api/history", { method: "POST", body: { action: "undo" } })); render(S.page); };
$("#redo").onclick = async () => { setState(await api("/api/history", { method: "POST", body: { action: "redo" } })); render(S.page); };
$("#branch").onchange = async (e) => { setState(await api("/api/history", { method: "POST", body: { action: "switch", name: e.target.value } })); render(S.page); };
$("#historylist").onchange = async (e) => { setState(await api("/api/history", { method: "POST", body: { action: "goto", pos: +e.target.value } })); render(S.page); };
$("#newbranch").onclick = async () => {
  const name = prompt("Name of the new branch (a copy of the history up to here):", "alternative " + S.state.history.branches.length);
  if (!name) return;
  setState(await api("/api/history", { method: "POST", body: { action: "branch", name } })); render(S.page);
};
document.addEventListener("keydown", (e) => {
  if (!(e.ctrlKey || e.metaKey) || ["INPUT", "TEXTAREA", "SELECT"].includes(document.activeElement.tagName)) return;
  if (e.key === "z" && !$("#undo").disabled) { e.preventDefault(); $("#undo").click(); }
  if (e.key === "y" && !$("#redo").disabled) { e.preventDefault(); $("#redo").click(); }
});

(async () => {
  setState(await api("/api/state"));
  go((location.hash || (S.state.has_data ? "#roles" : "#data")).slice(1));
})();
})();
