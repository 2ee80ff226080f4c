/* Shared helpers of the workbench's pages: the API, the session state, formatting, charts. */

export const CSRF = document.querySelector('meta[name="csrf"]').content;
export const S = { state: null, methods: null, gateChecks: null, labels: null, variables: null, suggestions: null,
                   page: "data", results: null, tableFile: null, ptableFile: null, explore: null };
export const $ = (sel, el = document) => el.querySelector(sel);
export const $$ = (sel, el = document) => Array.from(el.querySelectorAll(sel));
export const esc = (s) => String(s === undefined || s === null ? "" : s).replace(/[&<>"']/g,
  (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
export const fmt = (v, d = 4) => (v === null || v === undefined) ? "–" : (typeof v === "number"
  ? (Number.isInteger(v) ? v.toLocaleString("en") : Number(v.toPrecision(d)).toString()) : String(v));
/* global risk and every other share: a percentage, everywhere */
export const pct = (v) => (v === null || v === undefined) ? "–" : (100 * v).toFixed(2) + "%";

let busyCount = 0;
export function busy(on) { busyCount += on ? 1 : -1; $("#busy").hidden = busyCount <= 0; }
export function showError(msg) { const e = $("#error"); e.textContent = msg; e.hidden = !msg; }

export async function api(path, { method = "GET", body = null, raw = null, headers = {} } = {}) {
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

export function chart(el, spec) {
  if (typeof vegaEmbed === "undefined") { el.textContent = "(charts unavailable)"; return; }
  spec.$schema = "https://vega.github.io/schema/vega-lite/v5.json";
  spec.config = Object.assign({ view: { stroke: null }, axis: { labelFontSize: 11, titleFontSize: 11 } }, spec.config || {});
  vegaEmbed(el, spec, { actions: false, renderer: "svg" }).catch((e) => { el.textContent = "chart error: " + e.message; });
}
export function chartDiv(parent, title) {
  const box = document.createElement("div");
  if (title) { const h = document.createElement("h4"); h.textContent = title; box.appendChild(h); }
  const c = document.createElement("div"); box.appendChild(c); parent.appendChild(box); return c;
}

/* the pages register their renderers here (main.js); go() and setState() are shared */
export const PAGES = {};
export function go(page) {
  S.page = page;
  $$("#tabs a").forEach((a) => a.classList.toggle("active", a.dataset.page === page));
  $$(".page").forEach((p) => p.classList.toggle("active", p.id === "page-" + page));
  render(page);
}
export async function render(page) {
  const el = $("#page-" + page);
  try {
    if (page !== "data" && page !== "tables" && (!S.state || !S.state.has_data)) {
      el.innerHTML = `<div class="empty">Open a data file first (<a href="#data">Data page</a>).</div>`; return;
    }
    await PAGES[page](el);
  } catch (e) { if (!$("#error").textContent) showError(e.message); }
}

/* every page derives its buttons and forms from this one state, after every action and reload */
export function setState(st) {
  S.state = st;
  const hb = $("#historybar");
  S.results = null;
  $("#warnings").innerHTML = "";
  if (!st.has_data) {
    hb.hidden = true; $("#dataset").textContent = "no data open";
    if (st.pending_spec) $("#warnings").innerHTML = `<p class="warn">${esc(st.pending_spec.message)}</p>`;
    return;
  }
  hb.hidden = false;
  const file = st.spec.input.path.split(/[\\/]/).pop();
  $("#dataset").textContent = `${file} · ${st.n_records.toLocaleString("en")} records · ${st.columns.length} columns`;
  const h = st.history;
  $("#undo").disabled = !h.can_undo; $("#redo").disabled = !h.can_redo;
  $("#branch").innerHTML = h.branches.map((b) => `<option ${b === h.branch ? "selected" : ""}>${esc(b)}</option>`).join("");
  $("#historylist").innerHTML = h.entries.map((e) =>
    `<option value="${e.i}" ${e.i === h.pos ? "selected" : ""}>${e.i + 1}. ${esc(e.label)}</option>`).join("");
  $("#warnings").innerHTML = [...(st.warnings || []), ...(st.pending_spec ? [st.pending_spec.message] : [])]
    .map((w) => `<p class="warn">${esc(w)}</p>`).join("");
  refreshStrip();
}

export async function getResults() {
  if (!S.results) S.results = api("/api/results");
  return S.results;
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
      <span class="pill">sample uniques <b>${fmt(rk.n_sample_uniques)}</b></span>
      <span class="pill">records with f<sub>k</sub>&lt;3 <b>${fmt(rk.k_violations["3"])}</b></span>
      <span class="pill">global risk <b>${pct(rk.global_risk)}</b></span>
      <span class="pill">${gate}</span>`;
  } catch (e) { el.innerHTML = ""; }
}

export async function loadMethods() {
  if (!S.methods) {
    const m = await api("/api/methods");
    S.methods = m.methods; S.gateChecks = m.gate_checks; S.labels = m.labels;
  }
}

/* a value with its label: "2 (Female)" where the data label the code, else the value */
export const labelled = (value, label) => label ? `${esc(label)} <span class="muted small">(${esc(value)})</span>` : esc(value);

export function pollJob(id, progEl, cancelBtn, done) {
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
