/* 9 Tables: a one- or two-way table from the open microdata, protected and released through the
   tables API (GET /api/tables/methods, POST /api/tables/protect, POST /api/tables/release). The
   form is generated from the methods' and rules' declared parameters (widgets.js). */
import { $, S, api, esc, fmt, loadMethods, pollJob } from "./util.js";
import { fieldHtml, readFields } from "./widgets.js";

const MISSING = [["refuse", "refuse (name the missing values)"], ["category", "a “Missing” category"], ["drop", "drop them, with a count"]];

export async function renderTables(el) {
  await loadMethods();  // the labels of every declared parameter, table methods and rules included
  if (!S.tableDecl) S.tableDecl = await api("/api/tables/methods");
  const { methods, rules } = S.tableDecl;
  const cols = (S.state && S.state.has_data) ? (S.state.offered_columns || S.state.columns) : [];
  const keys = (S.state && S.state.has_data && S.state.spec.roles.key_vars) || [];
  const opt = (sel) => `<option value="">—</option>` + cols.map((c) => `<option ${c === sel ? "selected" : ""}>${esc(c)}</option>`).join("");
  const out = (S.state && S.state.has_data && S.state.spec.output.directory) || "";
  el.innerHTML = `<h2>Tables</h2><div class="row"><div class="card" style="max-width:620px"><div class="form" id="tform">
    <div class="field"><label for="td1">Rows</label><div><select id="td1">${opt(keys[0])}</select></div></div>
    <div class="field"><label for="td2">Columns <span class="unit">(optional)</span></label><div><select id="td2">${opt(keys[1])}</select></div></div>
    <div class="field"><label for="tresp">Response <span class="unit">(empty: a frequency table)</span></label><div><select id="tresp">${opt("")}</select></div></div>
    <div class="field"><label for="tmiss">Missing values in a dimension</label><div><select id="tmiss">${MISSING.map(([v, l]) => `<option value="${v}">${esc(l)}</option>`).join("")}</select></div></div>
    <div class="field"><label for="tmeth">Protection</label><div><select id="tmeth">${methods.map((m) => `<option value="${esc(m.name)}" ${m.name === "optimal" ? "selected" : ""}>${esc(m.label)}</option>`).join("")}</select></div>
      <div class="help" id="tmethhelp"></div></div>
    <div id="tmethparams"></div>
    <fieldset id="trules"><legend>Sensitivity rules</legend>${rules.map((r) => `<div class="rule" data-rule="${esc(r.name)}">
      <label for="rule-${esc(r.name)}"><input type="checkbox" id="rule-${esc(r.name)}" class="ruleon" ${r.name === "threshold" ? "checked" : ""}> ${esc(r.label)}</label>
      <span class="small muted">${esc(r.help)}</span><div class="ruleparams">${r.params.filter((p) => !p.advanced).map((p) => fieldHtml("rule:" + r.name, p)).join("")}</div></div>`).join("")}</fieldset></div>
    <p><button id="tprotect">Protect table</button> <button id="canceltab" class="secondary" hidden>cancel</button></p><div id="tprog"></div>
    <h3>Release the table</h3><div class="form">
      <div class="field"><label for="trelname">Table name</label><div><input type="text" id="trelname" value="table"></div></div>
      <div class="field"><label for="treldir">Folder</label><div><input type="text" id="treldir" value="${esc(out ? out.replace(/[\\/][^\\/]*$/, "/table_release") : "")}" style="width:100%"></div></div>
      <div class="field"><label for="trelover"><input type="checkbox" id="trelover"> Replace the earlier release in this folder</label></div></div>
    <p><button id="trelease" class="secondary">Release table</button></p><div id="trelprog"></div><div id="trelout"></div></div>
    <div class="card" id="tout"><div class="muted">build and protect a table</div></div></div>`;
  const showMethod = () => {
    const m = methods.find((x) => x.name === $("#tmeth").value);
    $("#tmethhelp").textContent = m.help;
    $("#tmethparams").innerHTML = m.params.filter((p) => !p.advanced).map((p) => fieldHtml("table:" + m.name, p)).join("")
      + (m.params.some((p) => p.advanced) ? `<details><summary>more options</summary>${m.params.filter((p) => p.advanced).map((p) => fieldHtml("table:" + m.name, p)).join("")}</details>` : "");
    $("#trules").hidden = !m.needs_rules;
  };
  $("#tmeth").onchange = showMethod; showMethod();
  const request = () => {
    const m = methods.find((x) => x.name === $("#tmeth").value);
    const dims = [$("#td1").value, $("#td2").value].filter((x) => x);
    const body = { dims, method: m.name, params: readFields($("#tmethparams"), m.params, null, "table:" + m.name),
                   missing: $("#tmiss").value, rules: [] };
    if ($("#tresp").value) body.response = $("#tresp").value;
    // hierarchies from the hierarchy editor, for the dimensions that have one
    const hier = Object.fromEntries(dims.filter((d) => (S.tableHierarchies || {})[d]).map((d) => [d, S.tableHierarchies[d]]));
    if (Object.keys(hier).length) body.hierarchies = hier;
    if (m.needs_rules) {
      for (const r of rules) {
        const box = $(`.rule[data-rule="${CSS.escape(r.name)}"]`);
        if (!$(".ruleon", box).checked) continue;
        body.rules.push({ type: r.name, ...readFields($(".ruleparams", box), r.params.filter((p) => !p.advanced), null, "rule:" + r.name) });
      }
    }
    return body;
  };
  $("#tprotect").onclick = async () => {
    const r = await api("/api/tables/protect", { method: "POST", body: request() });
    // suppression and rounding (a MILP each) run as a job with progress; the others answer at once
    if (r.grid) { $("#tprog").innerHTML = ""; drawTable(r); } else pollJob(r.id, $("#tprog"), $("#canceltab"), drawTable);
  };
  $("#trelease").onclick = async () => {
    const body = { ...request(), folder: $("#treldir").value, name: $("#trelname").value, overwrite: $("#trelover").checked };
    const job = await api("/api/tables/release", { method: "POST", body });
    pollJob(job.id, $("#trelprog"), null, (r) => {
      $("#trelout").innerHTML = `<p class="verdict ${r.passed ? "ok" : "fail"}" id="tablereleased">${r.passed ? "✔" : "✘"} ${esc(r.verdict)}</p>
        <h4>Public files (to publish)</h4><ul id="tpublic">${r.public.map((f) => `<li>${esc(f)}</li>`).join("")}</ul>
        <h4>Internal files (keep)</h4><ul id="tinternal">${(r.internal || []).map((f) => `<li>${esc(f)}</li>`).join("") || "<li>none</li>"}</ul>`;
    });
  };
}

const SUMMARY_WORDS = { method: "method", n_cells: "cells", n_primary: "sensitive cells (primary)", n_secondary: "secondary suppressions",
  cost: "cost of the suppressed cells", status: "solver status", proven_optimal: "proven optimal", audit_ok: "audit passed",
  audit_status: "audit", n_sensitive: "sensitive cells", base: "rounding base" };

function drawTable(r) {
  const g = r.grid, hidden = (c) => c.status === "primary" || c.status === "secondary" || c.status === "suppressed";
  const s = r.summary, words = r.status_words || {};
  const yesno = (v) => (v === true ? "yes" : v === false ? "no" : fmt(v));
  $("#tout").innerHTML = `<h3>${esc(r.dims.join(" × "))} <span class="tag">${esc(r.kind)}</span></h3>
    <p class="sentence" id="tauditsentence">${esc((r.audit && r.audit.sentence) || "")}</p>
    <table class="kv small">${Object.entries(s).filter(([k]) => k !== "method").map(([k, v]) => `<tr><th>${esc(SUMMARY_WORDS[k] || k.replace(/_/g, " "))}</th><td>${esc(yesno(v))}</td></tr>`).join("")}</table>
    <ul class="guarantees">${r.guarantees.map((x) => `<li class="${x.holds ? "ok" : "fail"}">${x.holds ? "✔" : "✘"} ${esc(x.statement)}</li>`).join("")}</ul>
    <p class="legend">${Object.entries(words).map(([k, w]) => `<span class="${esc(k)}">${esc(w)}</span>`).join(" ")}</p>
    <div style="overflow:auto;max-height:520px"><table class="tgrid" id="tablegrid"><tr><th></th>${g.cols.map((c) => `<th>${esc(c)}</th>`).join("")}</tr>
    ${g.rows.map((row, i) => `<tr><th>${esc(row)}</th>${g.cells[i].map((c) => `<td class="${esc(c.status)}" title="${esc(words[c.status] || "")}${c.freq !== undefined ? `, ${c.freq} contributors` : ""}">${hidden(c) ? "x" : fmt(c.value)}</td>`).join("")}</tr>`).join("")}</table></div>
    ${(r.audit_rows || []).length ? `<h4>Audit: the interval an attacker can derive for each protected cell</h4>
      <div style="overflow:auto;max-height:300px"><table class="grid small"><tr><th>cell</th><th>lower</th><th>upper</th><th>protected</th></tr>
      ${r.audit_rows.map((a) => `<tr><td>${esc(Array.isArray(a.codes) ? a.codes.join(", ") : a.codes)}</td><td>${fmt(a.lower)}</td><td>${fmt(a.upper)}</td><td class="${a.protected ? "ok" : "fail"}">${a.protected ? "yes" : "NO"}</td></tr>`).join("")}</table></div>` : ""}`;
}
