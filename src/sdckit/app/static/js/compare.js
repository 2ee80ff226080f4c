/* 5 Compare: two branches side by side, their steps with settings (differences marked), the
   gate, the risk and the utility in one table. */
import { $, S, api, esc, fmt, pct } from "./util.js";
import { gateHtml } from "./steps.js";

export async function renderCompare(el) {
  const h = S.state.history;
  const opts = (sel) => h.branches.map((b) => `<option ${b === sel ? "selected" : ""}>${esc(b)}</option>`).join("");
  const other = h.branches.find((b) => b !== h.branch) || h.branch;
  el.innerHTML = `<h2>Compare two alternatives</h2><div class="card">
    <p class="small muted">Each branch is a line of history. Start one with “+ branch” in the header, change its steps, then compare.</p>
    <label for="ca">Branch</label> <select id="ca">${opts(h.branch)}</select> <label for="cb">versus</label> <select id="cb">${opts(other)}</select> <button id="docompare">Compare</button></div>
    <div id="cmpout"></div>`;
  let asked = 0;
  $("#docompare").onclick = async () => {
    const a = $("#ca").value, b = $("#cb").value, mine = ++asked;
    const r = await api(`/api/compare?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`);
    if (mine !== asked) return;  // a later comparison was asked for: this answer is stale
    const A = r.results[a], B = r.results[b];
    const n = Math.max(A.settings.length, B.settings.length);
    const cell = (x, y) => {
      if (!x) return `<td class="muted">—</td>`;
      const rows = Object.entries(x.settings).map(([k, v]) => {
        const differs = !y || y.method !== x.method || y.settings[k] !== v;
        return `<li class="${differs ? "differs" : ""}">${esc(k)}: ${esc(v)}</li>`;
      }).join("");
      const differs = !y || y.method !== x.method;
      return `<td><b class="${differs ? "differs" : ""}">${esc(x.method.replace(/_/g, " "))}</b><ul class="settings">${rows || "<li>default settings</li>"}</ul></td>`;
    };
    const stepRows = Array.from({ length: n }, (_, i) => `<tr><th>step ${i + 1}</th>${cell(A.settings[i], B.settings[i])}${cell(B.settings[i], A.settings[i])}</tr>`).join("");
    const fig = (x, f) => (x.risk && !x.risk.empty ? f(x.risk) : "–");
    const line = (name, f) => `<tr><th>${name}</th><td>${f(A)}</td><td>${f(B)}</td></tr>`;
    $("#cmpout").innerHTML = `<div class="card"><table class="grid cmptable"><tr><th></th><th>${esc(a)}</th><th>${esc(b)}</th></tr>${stepRows}
      ${line("sample uniques", (x) => fig(x, (k) => fmt(k.n_sample_uniques)))}
      ${line("records with f<sub>k</sub> &lt; 3", (x) => fig(x, (k) => fmt(k.k_violations["3"])))}
      ${line("k reached", (x) => fig(x, (k) => fmt(k.k_reached)))}
      ${line("global risk", (x) => fig(x, (k) => pct(k.global_risk)))}
      ${line("all-columns linkage", (x) => fig(x, (k) => (k.linkage ? pct(k.linkage.correct_link_share) : "–")))}
      ${line("utility: entropy kept on the keys", (x) => (x.utility_entropy === null ? "–" : pct(x.utility_entropy)))}
      </table><p class="small muted">Marked: a step or setting that differs between the two branches.</p></div>
      <div class="row">${[a, b].map((name) => { const x = r.results[name]; return `<div class="card"><h3>${esc(name)}: gate</h3>
        ${x.error ? `<p class="fail">${esc(x.error)}</p>` : ""}${x.gate.length ? gateHtml(x.gate) : `<p class="muted">no thresholds set</p>`}</div>`; }).join("")}</div>`;
  };
  if (h.branches.length > 1) $("#docompare").click();
}
