/* 6 Explore: sweeps in the background; the R-U map (risk on x, utility on y); the sweeps and
   their results stay in the session, so a reload finds them. */
import { $, $$, S, api, esc, fmt, loadMethods, pct, pollJob, setState } from "./util.js";

export async function renderExplore(el) {
  await loadMethods();
  const numeric = (m) => m.params.filter((p) => p.kind === "int" || p.kind === "float");
  const lab = (m, p) => ((S.labels[m.name] || {})[p.name] || {}).label || p.label;
  el.innerHTML = `<h2>Explore</h2><div class="row"><div class="card" style="max-width:640px">
    <p class="small muted">Each candidate is a method with a list of values for one setting, added after the current steps.
      Risk: record linkage of the keys (share of records re-identified); utility: entropy kept. Runs in the background.</p>
    <div id="cands"></div><p><button class="secondary" id="addcand">+ candidate</button></p>
    <p><label for="xthr">Risk threshold <span class="unit">(%)</span></label> <input type="number" id="xthr" value="3" step="any" style="width:90px">
      <label for="xseeds">Seeds</label> <input type="text" id="xseeds" value="1, 2" style="width:80px">
      <button id="runx">Run sweep</button> <button id="cancelx" class="danger" hidden>Cancel</button></p>
    <div id="xprog"></div></div><div class="card"><h3>R-U map</h3><div id="rumap" class="muted">run a sweep; then click a point to add that step</div><div id="xprop"></div>
    <div id="xhistory"></div></div></div>`;
  let n = 0;
  const addCand = (method = "local_suppression", param = "k", values = "2, 3, 5, 10", fixed = "") => {
    const d = document.createElement("div"); d.className = "cand"; const i = ++n;
    d.innerHTML = `<label for="cm${i}">Method</label> <select class="cm" id="cm${i}">${S.methods.map((m) => `<option value="${esc(m.name)}" ${m.name === method ? "selected" : ""}>${esc(m.name.replace(/_/g, " "))}</option>`).join("")}</select>
      <label for="cp${i}">setting</label> <select class="cp" id="cp${i}"></select> <label for="cv${i}">values</label> <input type="text" class="cv" id="cv${i}" value="${esc(values)}" style="width:130px">
      <label for="cf${i}">fixed settings</label> <input type="text" class="cf" id="cf${i}" value="${esc(fixed)}" placeholder='{"variables": ["x"]}' style="width:170px">
      <button class="tiny danger" title="remove this candidate">×</button>`;
    const fill = () => { const m = S.methods.find((x) => x.name === $(".cm", d).value);
      $(".cp", d).innerHTML = numeric(m).map((p) => `<option value="${esc(p.name)}" ${p.name === param ? "selected" : ""}>${esc(lab(m, p))}</option>`).join(""); };
    $(".cm", d).onchange = fill; fill(); $("button", d).onclick = () => d.remove();
    $("#cands").appendChild(d);
  };
  addCand();
  addCand("pram", "min_diagonal", "0.6, 0.8, 0.9", JSON.stringify({ variables: [(S.state.spec.roles.key_vars || ["x"]).slice(-2)[0] || "x"] }));
  $("#addcand").onclick = () => addCand();
  $("#runx").onclick = async () => {
    const candidates = $$(".cand").map((d) => {
      const p = $(".cp", d).value;
      const values = $(".cv", d).value.split(",").map((x) => x.trim()).filter((x) => x).map(Number);
      const f = $(".cf", d).value.trim();
      return { method: $(".cm", d).value, grid: p ? { [p]: values } : {}, fixed: f ? JSON.parse(f) : {} };
    });
    const job = await api("/api/explore", { method: "POST", body: { candidates, threshold: parseFloat($("#xthr").value) / 100,
      seeds: $("#xseeds").value.split(",").map((x) => parseInt(x, 10)).filter((x) => !isNaN(x)) } });
    pollJob(job.id, $("#xprog"), $("#cancelx"), (res) => { S.explore = res; drawRU(res); listSweeps(); });
  };
  await listSweeps();
}

async function listSweeps() {
  const r = await api("/api/explore/sweeps");
  const el = $("#xhistory");
  if (!el) return;
  if (!r.sweeps.length) { el.innerHTML = ""; return; }
  el.innerHTML = `<h4>Sweeps of this session</h4><ul>${r.sweeps.map((s, i) => `<li><a href="#explore" data-sweep="${i}">sweep ${i + 1}</a>
    (${esc(s.time)}, branch ${esc(s.branch)}): ${s.result.points.length} settings, threshold ${pct(s.result.threshold)}</li>`).join("")}</ul>`;
  $$("[data-sweep]", el).forEach((a) => a.onclick = (e) => { e.preventDefault(); S.explore = r.sweeps[+a.dataset.sweep].result; drawRU(S.explore); });
  if (!S.explore) S.explore = r.sweeps[r.sweeps.length - 1].result;
  if (!$("#rumap svg")) drawRU(S.explore);
}

function settingText(params) {
  if (typeof params === "string") { try { params = JSON.parse(params); } catch (e) { return params; } }
  return Object.entries(params || {}).map(([k, v]) => `${k.replace(/_/g, " ")} ${Array.isArray(v) ? v.join(", ") : (typeof v === "object" ? "…" : v)}`).join("; ");
}

function drawRU(res) {
  const el = $("#rumap");
  if (!el) return;
  el.innerHTML = ""; el.classList.remove("muted");
  const pts = res.points.map((p) => ({ ...p, setting: settingText(p.params), risk_pct: 100 * p.risk }));
  const spec = { width: 430, height: 300, data: { values: pts },
    layer: [
      { mark: { type: "point", filled: true, size: 80, cursor: "pointer" }, params: [{ name: "pick", select: { type: "point", on: "click" } }],
        encoding: { x: { field: "risk_pct", type: "quantitative", title: `risk: ${res.risk} (% of records)` },
          y: { field: "utility", type: "quantitative", title: `utility: ${res.utility}`, scale: { zero: false } },
          color: { field: "method" }, tooltip: [{ field: "method" }, { field: "setting" }, { field: "risk_pct", title: "risk (%)", format: ".2f" }, { field: "utility", format: ".4f" }] } },
      { data: { values: [{ t: 100 * res.threshold }] }, mark: { type: "rule", strokeDash: [5, 4], color: "#c62828" }, encoding: { x: { field: "t", type: "quantitative" } } }] };
  spec.$schema = "https://vega.github.io/schema/vega-lite/v5.json";
  vegaEmbed(el, spec, { actions: false, renderer: "svg" }).then((r) => {
    r.view.addEventListener("click", async (ev, item) => {
      if (!item || !item.datum || item.datum.method === undefined) return;
      const d = item.datum;
      if (!confirm(`Add ${d.method} (${d.setting}) as the next step?`)) return;
      setState(await api("/api/explore/load", { method: "POST", body: { method: d.method, params: d.params } }));
      location.hash = "#steps";
    });
  });
  $("#xprop").innerHTML = res.proposal ? `<p>Best under the threshold ${pct(res.threshold)}: <b>${esc(res.proposal.method)}</b>
    with ${esc(settingText(res.proposal.params))} (risk ${pct(res.proposal.risk)}, utility ${fmt(res.proposal.utility)}).
    Original risk ${pct(res.original_risk)}.</p>` : `<p class="fail">No setting is below the threshold.</p>`;
}
