/* 8 Gate and release: thresholds from their declarations, the output folder with an overwrite
   box, the release job, public and internal files listed apart, the spec export and import. */
import { $, $$, S, api, esc, getResults, go, loadMethods, pollJob, setState } from "./util.js";
import { gateHtml } from "./steps.js";
import { fieldHtml, readFields } from "./widgets.js";

function gateForm(g, value) {
  const [first, ...rest] = g.params;
  if (!first) return "";
  const owner = "gate:" + g.name;
  const v = value === undefined ? {} : (value !== null && typeof value === "object" && !Array.isArray(value) ? value : { [first.name]: value });
  return `<div class="gatecheck" data-gate="${esc(g.name)}">${fieldHtml(owner, { ...first, required: false, default: null }, v[first.name])}
    ${rest.length ? `<details><summary>more settings</summary>${rest.map((p) => fieldHtml(owner, p, v[p.name])).join("")}</details>` : ""}
    <div class="small muted">${esc(g.description)}</div></div>`;
}

function readGate(box, g) {
  const [first, ...rest] = g.params;
  const firstVal = readFields(box, [{ ...first, default: null }], null, "gate:" + g.name)[first.name];
  if (firstVal === undefined) return undefined;
  const more = {};
  for (const p of rest) {
    const d = box.querySelector(`details .field[data-param="${CSS.escape(p.name)}"]`);
    if (d) Object.assign(more, readFields(d.parentElement, [p], null, "gate:" + g.name));
  }
  return Object.keys(more).length ? { [first.name]: firstVal, ...more } : firstVal;
}

export async function renderRelease(el) {
  await loadMethods();
  const gate = S.state.spec.gate || {}, out = S.state.spec.output || {}, rep = S.state.spec.report || {};
  const risk = S.gateChecks.filter((g) => g.risk), other = S.gateChecks.filter((g) => !g.risk);
  el.innerHTML = `<h2>Gate and release</h2><div class="card"><h3>Gate thresholds</h3><div id="gateverdict"></div>
    <h4>Risk thresholds</h4><div class="gategrid">${risk.map((g) => gateForm(g, gate[g.name])).join("")}</div>
    <details><summary>other checks</summary><div class="gategrid">${other.map((g) => gateForm(g, gate[g.name])).join("")}</div></details>
    <p><button id="savegate">Save thresholds</button></p></div>
    <div class="row"><div class="card"><h3>Release</h3><div class="form">
      <div class="field"><label for="outdir">Folder</label><div><input type="text" id="outdir" value="${esc(out.directory || "")}" style="width:100%"></div></div>
      <div class="field"><label for="outdata">Data file name</label><div><input type="text" id="outdata" value="${esc(out.data || "")}"></div>
        <div class="help">its suffix sets the format (.csv, .parquet, .sav, .dta)</div></div>
      <div class="field"><label for="overwrite"><input type="checkbox" id="overwrite" ${out.overwrite ? "checked" : ""}> Replace the earlier release in this folder</label>
        <div class="help">only a folder sdckit wrote as a release is replaced</div></div></div>
      <h4>Report</h4><div class="form">
      <div class="field"><label for="reptitle">Title</label><div><input type="text" id="reptitle" value="${esc(rep.title || "")}" style="width:100%"></div>
        <div class="help">the reports' and the PDF's title (empty: "Release report")</div></div>
      <div class="field"><label for="reporg">Organisation</label><div><input type="text" id="reporg" value="${esc(rep.organisation || "")}" style="width:100%"></div></div>
      <div class="field"><label for="reprel">Release</label><div><input type="text" id="reprel" value="${esc(rep.release || "")}"></div>
        <div class="help">the release's name or date, as the title page shows it</div></div></div>
      <p><button id="saveout" class="secondary">Save folder</button> <button id="dorelease">Release</button> <button id="cancelrel" class="danger" hidden>Cancel</button></p><div id="relprog"></div><div id="relout"></div></div>
    <div class="card"><h3>Release spec</h3><p class="small">The session as a TOML spec: <code>sdckit protect release.toml</code> writes the same files.</p>
      <label class="small" for="withseed"><input type="checkbox" id="withseed" checked> include the run seed (needed to rerun byte for byte; a secret)</label>
      <p><a id="exportlink" class="btn" href="/api/export?seed=1" download="release.toml">Export spec</a></p>
      <p class="small"><label for="importspec">Continue a session from a spec</label> <input type="file" id="importspec" accept=".toml"></p></div></div>
    <div id="reports"></div>`;
  $("#withseed").onchange = (e) => { $("#exportlink").href = "/api/export?seed=" + (e.target.checked ? 1 : 0); };
  $("#savegate").onclick = async () => {
    const g = {};
    $$(".gatecheck").forEach((box) => {
      const check = S.gateChecks.find((x) => x.name === box.dataset.gate);
      const v = readGate(box, check);
      if (v !== undefined) g[check.name] = v;
    });
    setState(await api("/api/gate", { method: "POST", body: { gate: g } })); go("release");
  };
  const saveReport = async () => setState(await api("/api/report", { method: "POST",
    body: { title: $("#reptitle").value, organisation: $("#reporg").value, release: $("#reprel").value } }));
  const reportChanged = () => $("#reptitle").value !== (rep.title || "") || $("#reporg").value !== (rep.organisation || "")
    || $("#reprel").value !== (rep.release || "");
  const saveOut = async () => {
    setState(await api("/api/output", { method: "POST", body: { directory: $("#outdir").value, data: $("#outdata").value, overwrite: $("#overwrite").checked } }));
    if (reportChanged()) await saveReport();
  };
  $("#saveout").onclick = saveOut;
  $("#dorelease").onclick = async () => {
    if ($("#outdir").value !== (out.directory || "") || $("#outdata").value !== (out.data || "") || $("#overwrite").checked !== !!out.overwrite
        || reportChanged()) await saveOut();
    const job = await api("/api/release", { method: "POST", body: {} });
    pollJob(job.id, $("#relprog"), $("#cancelrel"), (r) => { showRelease(r, r.index); });
  };
  $("#importspec").onchange = async (ev) => {
    const f = ev.target.files[0]; if (!f) return;
    setState(await api("/api/import", { method: "POST", raw: await f.text(), headers: { "Content-Type": "application/toml" } }));
    S.variables = null; S.suggestions = null; go("steps");
  };
  const rels = S.state.releases || [];
  if (rels.length) showRelease(rels[rels.length - 1], rels.length - 1);
  const res = await getResults();
  $("#gateverdict").innerHTML = res.gate.length ? gateHtml(res.gate, res.verdict) : (res.verdict ? `<div class="verdict fail">${esc(res.verdict)}</div>` : `<p class="muted">no thresholds set: a release needs at least one you can defend (or “no risk threshold”, with the reason).</p>`);
}

function showRelease(r, index) {
  $("#relout").innerHTML = `<p class="verdict ${r.passed ? "ok" : "fail"}" id="released">${r.passed ? "✔" : "✘"} released to ${esc(r.directory)} — ${esc(r.verdict)}</p>
    <h4>Public files (to publish)</h4><ul id="publicfiles">${(r.public_files || r.files).map((f) => `<li>${esc(f)}</li>`).join("")}</ul>
    <h4>Internal files (keep: seeds and parameters)</h4><ul id="internalfiles">${(r.internal_files || []).map((f) => `<li>${esc(f)}</li>`).join("") || "<li>none</li>"}</ul>
    <p><a class="btn secondary" target="_blank" href="/release/${index}/report">open the public report</a></p>
    <p id="downloads">Download: <a class="btn secondary" id="dlhtml" href="/release/${index}/download/html" download>public report (HTML)</a>
      <a class="btn secondary" id="dlpdf" href="/release/${index}/download/pdf" download>public report (PDF)</a>
      <a class="btn secondary" id="dlcert" href="/release/${index}/download/certificate" download>certificate</a></p>`;
  $("#reports").innerHTML = `<div class="card"><h3>Public report</h3><iframe class="report" title="public report" src="/release/${index}/report"></iframe></div>`;
}
