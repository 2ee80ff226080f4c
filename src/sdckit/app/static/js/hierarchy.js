/* 10 Hierarchies: build an interval, grouping, masking or date hierarchy of a column (as ARX's
   wizard), see its levels, save it (an ARX-compatible CSV in the output root's hierarchies
   folder) and attach it to a recode step or to a table dimension. */
import { $, S, api, esc, setState } from "./util.js";

export async function renderHierarchy(el) {
  const decl = await api("/api/hierarchy/kinds");
  const cols = S.state.offered_columns || S.state.columns;
  el.innerHTML = `<h2>Hierarchies</h2><div class="row"><div class="card form" style="flex:1 1 420px">
    <p class="small muted">A hierarchy gives every value of a column a coarser label at each level. Saved as an ARX-style
      CSV (one row per value, one column per level), it drives a recode step (generalise to a level) or the groups of a table dimension.</p>
    <div class="field"><label for="hcol">Column</label><select id="hcol">${cols.map((c) => `<option>${esc(c)}</option>`).join("")}</select></div>
    <div class="field"><label for="hkind">Kind</label><select id="hkind">${decl.kinds.map((k) =>
      `<option value="${esc(k.name)}">${esc(k.label)}</option>`).join("")}</select><div class="help" id="hkindhelp"></div></div>
    <div id="hsettings"></div>
    <p><button id="hshow">Show the levels</button></p>
    <div class="field"><label for="hname">File name</label><input id="hname" placeholder="Age.csv"></div>
    <div class="field"><label for="hover">Overwrite</label><span><input type="checkbox" id="hover"> replace a file of this name</span></div>
    <p><button id="hsave">Save the hierarchy</button></p>
    <p class="small muted" id="hsaved">${decl.saved.length ? "Saved: " + decl.saved.map(esc).join(", ") : "No hierarchy saved yet."}</p>
  </div><div class="card" style="flex:2 1 560px" id="hout"><div class="muted">Choose a kind and its settings, then show the levels.</div></div></div>`;
  const kindOf = () => decl.kinds.find((k) => k.name === $("#hkind").value);
  const showKind = () => {
    const k = kindOf();
    $("#hkindhelp").textContent = k.help;
    $("#hsettings").innerHTML = k.settings.map((s) => `<div class="field"><label for="hs_${s.name}">${esc(s.label)}</label>
      <input id="hs_${s.name}" data-setting="${s.name}"><div class="help">${esc(s.help)}</div></div>`).join("");
  };
  $("#hkind").onchange = showKind; showKind();
  const defaultName = () => { if (!$("#hname").dataset.touched) $("#hname").value = $("#hcol").value + ".csv"; };
  $("#hname").oninput = () => { $("#hname").dataset.touched = "1"; };
  $("#hcol").onchange = defaultName; defaultName();
  const request = () => {
    const settings = {};
    el.querySelectorAll("[data-setting]").forEach((i) => { if (i.value.trim()) settings[i.dataset.setting] = i.value.trim(); });
    return { column: $("#hcol").value, kind: $("#hkind").value, settings };
  };
  $("#hshow").onclick = async () => showLevels(await api("/api/hierarchy/preview", { method: "POST", body: request() }), null);
  $("#hsave").onclick = async () => {
    const r = await api("/api/hierarchy/save", { method: "POST",
      body: { ...request(), name: $("#hname").value, overwrite: $("#hover").checked } });
    $("#hsaved").textContent = "Saved: " + r.saved.join(", ");
    showLevels(r, r);
  };

  function showLevels(v, saved) {
    const more = v.n_rows > v.rows.length ? `<p class="small muted">The first ${v.rows.length} of ${v.n_rows} values; the file holds them all.</p>` : "";
    const attach = saved ? `<div class="card"><h4>Saved as ${esc(saved.file)}</h4>
      <p><label for="hlevel">Recode ${esc(saved.column)} to level</label> <select id="hlevel">${Array.from({ length: saved.n_levels }, (_, i) =>
        `<option value="${i + 1}">${i + 1}: ${esc(v.columns[i + 1])} (${v.distinct[i + 1]} categories)</option>`).join("")}</select>
        <button id="hrecode">Add a recode step</button></p>
      <p><button class="secondary" id="htable">Use it for the ${esc(saved.column)} dimension of tables</button>
        <span class="small muted" id="htablemsg"></span></p></div>` : "";
    $("#hout").innerHTML = `<h3>Levels of ${esc(request().column)}</h3>
      <p class="small">${v.columns.map((c, i) => `${esc(c)}: ${v.distinct[i]} ${v.distinct[i] === 1 ? "label" : "labels"}`).join(" · ")}</p>
      ${attach}<table class="grid" id="hlevels"><tr>${v.columns.map((c) => `<th>${esc(c)}</th>`).join("")}</tr>
      ${v.rows.map((r) => `<tr>${r.map((x) => `<td>${esc(x)}</td>`).join("")}</tr>`).join("")}</table>${more}`;
    if (!saved) return;
    $("#hrecode").onclick = async () => {
      const step = { method: "recode", variable: saved.column, hierarchy_file: saved.path, level: +$("#hlevel").value };
      setState(await api("/api/steps", { method: "POST", body: { action: "add", step } }));
      location.hash = "#steps";
    };
    $("#htable").onclick = () => {
      S.tableHierarchies = { ...(S.tableHierarchies || {}), [saved.column]: { saved: saved.file } };
      $("#htablemsg").textContent = `the tables page groups ${saved.column} by ${saved.file}`;
    };
  }
}
