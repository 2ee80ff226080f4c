/* 4 Steps: forms generated from the declarations, the steps' results, the recode helper. */
import { $, $$, S, api, chart, chartDiv, esc, fmt, getResults, go, loadMethods, pct, setState, showError } from "./util.js";
import { formHtml, parseLoose, readForm, wireVariants } from "./widgets.js";
import { renderSynthesis } from "./synthesis.js";
import { renderLattice } from "./lattice.js";

/* any value in words, never JSON: objects as "key value; key value", lists as comma lists */
export function words(v, depth = 0) {
  if (v === null || v === undefined) return "–";
  if (Array.isArray(v)) return v.length ? v.map((x) => words(x, depth + 1)).join(", ") : "none";
  if (typeof v === "object") {
    if (depth > 1) return `${Object.keys(v).length} entries`;
    return Object.entries(v).map(([k, x]) => `${k.replace(/_/g, " ")} ${words(x, depth + 1)}`).join("; ");
  }
  if (typeof v === "boolean") return v ? "yes" : "no";
  return fmt(v);
}

/* the gate table: label, threshold (with unit), measured (a sentence), verdict */
export function gateHtml(gate, verdict) {
  const ok = gate.every((g) => g.passed);
  const unchecked = verdict && verdict.startsWith("NOT CHECKED");
  return `<div class="verdict ${ok && !unchecked ? "ok" : "fail"}">${unchecked ? esc(verdict) : (ok ? "✔ the release passes its gate" : "✘ the gate fails")}</div>
    <table class="grid gateresult"><tr><th>threshold</th><th>set to</th><th>measured</th><th>verdict</th></tr>
    ${gate.map((g) => `<tr><td>${esc(g.label || g.name)}</td><td>${esc(g.threshold_text || words(g.threshold))}</td><td class="small measured">${esc(g.measured || words(g.value))}</td>
      <td class="${g.passed ? "ok" : "fail"}">${g.passed ? "passed" : "FAILED"}</td></tr>`).join("")}</table>`;
}

const methodLabel = (m) => `${m.name.replace(/_/g, " ")} — ${m.summary.slice(0, 60)}`;

export async function renderSteps(el) {
  await loadMethods();
  const steps = S.state.spec.steps || [];
  el.innerHTML = `<h2>Steps</h2><div class="row">
    <div class="card" style="flex:1 1 430px;max-width:560px" id="addcard"><h3>Add a step</h3>
      <label for="methodsel">Method</label> <select id="methodsel"><option value="">choose a method…</option>${S.methods.map((m) =>
        `<option value="${esc(m.name)}">${esc(methodLabel(m))}</option>`).join("")}</select>
      <div id="stepform"></div><p><button id="addstep" disabled>Add step</button> <button id="savestep" class="secondary" hidden>Save changes</button></p></div>
    <div style="flex:2 1 620px" id="stepresults"><div class="card muted">running the steps…</div></div></div>`;
  let editing = null;
  const sel = $("#methodsel", el);
  const showForm = (name, values) => {
    const m = S.methods.find((x) => x.name === name);
    $("#stepform").innerHTML = m ? formHtml(m, values || {}) : "";
    $("#addstep").disabled = !m;
    wireVariants($("#stepform"));
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
    const params = Object.entries(st).filter(([k]) => k !== "method").map(([k, x]) => `${k} = ${words(x)}`).join(" · ");
    card.innerHTML = `<div class="stephead"><span class="title">${i + 1}. ${esc(st.method)}</span>
      <span class="acts"><button class="tiny secondary" data-a="up" title="move up">↑</button><button class="tiny secondary" data-a="down" title="move down">↓</button>
      <button class="tiny secondary" data-a="edit">edit</button><button class="tiny danger" data-a="delete">remove</button></span></div>
      ${v && v.sentence ? `<p class="sentence">${esc(v.sentence)}</p>` : ""}${v && v.explain_html ? v.explain_html /* the report's fragment, escaped there */ : ""}<div class="params">${esc(params || "default settings")}</div><div class="body"></div>`;
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

/* the recode helper: one "new category" box per value of the chosen variable (with its label);
   it writes the mapping {new label: [values]} into the form's mapping field */
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
     <td><input type="text" data-i="${i}" aria-label="new category of ${esc(x.label || x.value)}" value="${esc(labelOf(x.value))}" placeholder="keep" style="width:110px"></td></tr>`).join("")}</table>
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

/* a summary figure in words: a share ("share_...") as a percentage, a figure in percent
   ("..._percent") with its "%" */
const summaryLabel = (k) => k.replace(/_percent$/, "").replace(/_/g, " ");
const summaryValue = (k, x) => (typeof x !== "number" ? words(x) : (k.startsWith("share") ? pct(x) : (k.endsWith("_percent") ? `${fmt(x)}%` : words(x))));

function renderStepBody(el, v) {
  let h = "";
  const sm = Object.entries(v.summary || {}).filter(([, x]) => x === null || typeof x !== "object" || Array.isArray(x));
  if (sm.length) h += `<table class="kv small">${sm.slice(0, 12).map(([k, x]) => `<tr><th>${esc(summaryLabel(k))}</th><td>${esc(summaryValue(k, x))}</td></tr>`).join("")}</table>`;
  if (v.guarantees.length) h += `<h4>Guarantees</h4><ul class="guarantees">${v.guarantees.map((g) =>
    `<li class="${g.holds ? "ok" : "fail"}">${g.holds ? "✔" : "✘"} ${esc(g.statement)} <span class="muted">(measured: ${esc(words(g.value))})</span></li>`).join("")}</ul>`;
  if (v.risk_after && !v.risk_after.empty) {
    const r = v.risk_after;
    h += `<h4>Risk after this step</h4><div class="small">sample uniques <b>${fmt(r.n_sample_uniques)}</b> · records with f<sub>k</sub> &lt; 3: <b>${fmt(r.k_violations["3"])}</b> ·
      k reached <b>${fmt(r.k_reached)}</b> · global risk <b>${pct(r.global_risk)}</b> · largest individual risk ${pct(r.max_individual_risk)}</div>`;
  }
  if (v.removed_columns.length) h += `<p class="small">removed: ${v.removed_columns.map(esc).join(", ")}</p>`;
  h += `<div class="charts"></div>`;
  el.innerHTML = h;
  const ch = $(".charts", el);
  if (v.synthesis) renderSynthesis(el, v.synthesis, ch);  // the panel above the before/after bars
  if (v.lattice) renderLattice(el, v.lattice, ch);  // a generalise step: the lattice's solution space
  for (const [col, f] of Object.entries(v.frequencies)) {
    chart(chartDiv(ch, `${col}: before / after ` + (f.hellinger === null ? "(categories recoded)" : `(Hellinger distance ${fmt(f.hellinger, 3)}, total variation ${fmt(f.tvd, 3)})`)), {
      width: Math.min(360, 24 * f.shown + 40), height: 130, data: { values: f.bars }, mark: "bar",
      encoding: { x: { field: "category", type: "nominal", sort: { field: "order" }, title: null }, xOffset: { field: "when", sort: ["before", "after"] },
        y: { field: "records", type: "quantitative" }, color: { field: "when", sort: ["before", "after"], scale: { range: ["#9fb6cd", "#2f6fad"] }, legend: { orient: "top", title: null } },
        tooltip: [{ field: "category" }, { field: "when" }, { field: "records" }] } });
  }
  if (v.numeric) {
    const t = document.createElement("div");
    t.innerHTML = `<h4>Numeric variables</h4><table class="grid small"><tr><th>variable</th><th>statistic</th><th>before</th><th>after</th></tr>
      ${v.numeric.moments.map((m) => `<tr><td>${esc(m.variable)}</td><td>${esc(m.statistic)}</td><td>${fmt(m.before)}</td><td>${fmt(m.after)}</td></tr>`).join("")}</table>`;
    ch.appendChild(t);
    if (v.numeric.correlations.length) chart(chartDiv(ch, "change of the correlation matrix"), {
      width: 200, height: 200, data: { values: v.numeric.correlations }, mark: "rect",
      encoding: { x: { field: "col", title: null }, y: { field: "row", title: null },
        color: { field: "change", type: "quantitative", scale: { scheme: "redblue", domainMid: 0 } },
        tooltip: [{ field: "row" }, { field: "col" }, { field: "before", format: ".3f" }, { field: "after", format: ".3f" }] } });
  }
  for (const m of v.matrices) {
    if (!m.cells) { ch.insertAdjacentHTML("beforeend", `<div class="small">${esc(m.title)}: ${esc(m.note)}</div>`); continue; }
    chart(chartDiv(ch, `PRAM matrix: ${m.title} (smallest diagonal ${fmt(m.min_diagonal, 3)})`), {
      width: 180, height: 180, data: { values: m.cells },
      layer: [{ mark: "rect", encoding: { x: { field: "to", sort: null }, y: { field: "from", sort: null },
                 color: { field: "p", type: "quantitative", scale: { scheme: "blues", domain: [0, 1] } } } },
              { mark: { type: "text", fontSize: 10 }, encoding: { x: { field: "to", sort: null }, y: { field: "from", sort: null },
                 text: { field: "p", format: ".2f" }, color: { condition: { test: "datum.p > 0.5", value: "white" }, value: "black" } } }] });
  }
}
