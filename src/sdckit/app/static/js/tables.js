/* 8 Tables: a one- or two-way table from the open microdata or a cell list, protected by
   suppression, rounding or the cell key method. */
import { $, $$, S, api, esc, fmt, pollJob } from "./util.js";
import { words } from "./steps.js";

export async function renderTables(el) {
  const cols = (S.state && S.state.has_data) ? (S.state.offered_columns || S.state.columns) : [];
  const opt = (sel) => `<option value="">—</option>` + cols.map((c) => `<option ${c === sel ? "selected" : ""}>${esc(c)}</option>`).join("");
  const keys = (S.state && S.state.has_data && S.state.spec.roles.key_vars) || [];
  el.innerHTML = `<h2>Tables</h2><div class="row"><div class="card" style="max-width:600px"><div class="form">
    <fieldset><legend>Source</legend><label for="tsrc1"><input type="radio" name="tsrc" id="tsrc1" value="micro" checked> the open microdata</label>
      <label for="tsrc2"><input type="radio" name="tsrc" id="tsrc2" value="cells"> a cell list (CSV)</label> <label for="tfile" class="small">file</label> <input type="file" id="tfile" accept=".csv"></fieldset>
    <div class="field"><label for="td1">Rows</label><div><select id="td1">${opt(keys[0])}</select> <label for="td1t" class="small">cell list column</label> <input type="text" id="td1t" style="width:120px"></div></div>
    <div class="field"><label for="td2">Columns</label><div><select id="td2">${opt(keys[1])}</select> <label for="td2t" class="small">cell list column</label> <input type="text" id="td2t" style="width:120px"></div></div>
    <div class="field"><label for="tresp">Response (magnitude)</label><div><select id="tresp">${opt("")}</select> <label for="tval" class="small">cell list value column</label> <input type="text" id="tval" style="width:120px"></div>
      <div class="help">empty: a frequency table (counts)</div></div>
    <fieldset><legend>Sensitivity rules</legend><label for="rthr">Threshold rule: fewer than n contributors <span class="sym">n</span></label> <input type="number" id="rthr" value="3" style="width:60px">
      <label for="rp">p% rule <span class="unit">(%)</span></label> <input type="number" id="rp" placeholder="off" style="width:60px">
      <label for="rdom">Dominance (n, k%)</label> <input type="text" id="rdom" placeholder="off, e.g. 1,80" style="width:80px"></fieldset>
    <div class="field"><label for="tmeth">Protection</label><div><select id="tmeth"><option value="optimal">optimal suppression</option><option value="modular">modular suppression</option>
      <option value="heuristic">heuristic suppression</option><option value="rounding">controlled rounding</option><option value="ckm">cell key method</option></select>
      <label for="tbase">rounding base</label> <input type="number" id="tbase" value="3" style="width:60px"></div></div>
    <fieldset id="ckmfields"><legend>Cell key method</legend>
      <label for="tpt1"><input type="radio" name="tpt" id="tpt1" value="gen" checked> p-table from its parameters:</label>
      <label for="tD">largest deviation <span class="sym">D</span></label> <input type="number" id="tD" value="5" style="width:50px">
      <label for="tV">variance <span class="sym">V</span></label> <input type="number" id="tV" value="3" step="0.1" style="width:60px">
      <label for="tjs">smallest count kept <span class="sym">js</span></label> <input type="number" id="tjs" value="2" style="width:50px"><br>
      <label for="tpt2"><input type="radio" name="tpt" id="tpt2" value="file"> from a tau-Argus file</label> <label for="tptab" class="small">p-table file</label> <input type="file" id="tptab" accept=".txt,.csv"> <span id="tptinfo" class="small muted"></span><br>
      <label for="tkey">Record key column</label> <input type="text" id="tkey" value="Key" style="width:80px">
      <div class="help">ignores the rules; every cell, totals included, is perturbed from its cell key (record keys drawn from the session seed when the column is absent)</div></fieldset></div>
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
    <table class="kv small">${Object.entries(s).map(([k, v]) => `<tr><th>${esc(k.replace(/_/g, " "))}</th><td>${esc(words(v))}</td></tr>`).join("")}</table>
    <ul class="guarantees">${r.guarantees.map((x) => `<li class="${x.holds ? "ok" : "fail"}">${x.holds ? "✔" : "✘"} ${esc(x.statement)}</li>`).join("")}</ul>
    ${s.method === "ckm" ? `<p class="ckmnote">${esc(r.describe)}</p>
      <p class="legend"><span class="perturbed" style="background:#e9e3fb">n<sup>p</sup> perturbed (changed by the p-table; hover for the original)</span></p>`
    : `<p class="legend"><span class="primary" style="background:#f9c9c6">x primary</span><span style="background:#fde3b5">x secondary</span>${s.method === "rounding" ? `<span style="background:#e6eefc">rounded</span>` : ""}</p>`}
    <div style="overflow:auto;max-height:520px"><table class="tgrid" id="tablegrid"><tr><th></th>${g.cols.map((c) => `<th>${esc(c)}</th>`).join("")}</tr>
    ${g.rows.map((row, i) => `<tr><th>${esc(row)}</th>${g.cells[i].map((c) => `<td class="${c.status}" title="cell ${c.cell}, ${c.freq} contributors${c.original !== undefined ? `, original ${fmt(c.original)}` : ""}">${sup(c) ? "x" : fmt(c.value)}${c.status === "perturbed" ? "<sup>p</sup>" : ""}</td>`).join("")}</tr>`).join("")}</table></div>
    ${r.audit.length ? `<h4>Audit: interval an attacker can derive for each ${s.method === "rounding" ? "" : "suppressed "}cell</h4>
      <div style="overflow:auto;max-height:300px"><table class="grid small"><tr><th>cell</th><th>lower</th><th>upper</th><th>protected</th></tr>
      ${r.audit.map((a) => `<tr><td>${esc(words(a.codes))}</td><td>${fmt(a.lower)}</td><td>${fmt(a.upper)}</td><td class="${a.protected ? "ok" : "fail"}">${a.protected ? "yes" : "NO"}</td></tr>`).join("")}</table></div>` : ""}`;
}
