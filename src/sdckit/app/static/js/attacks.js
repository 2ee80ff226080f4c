/* 7 Attacks: singling out, linkability, inference and membership inference against this
   branch's release, with a seeded share of the records set aside as control (app/attack_view.py).
   Runs as a job with progress and Cancel; each risk is shown with its 95% interval in the
   attack's own sentence (the one the release report uses). The runs stay for reloads. */
import { $, $$, S, api, chart, chartDiv, esc, fmt, pollJob } from "./util.js";

export async function renderAttacks(el) {
  const info = await api("/api/attacks/runs");
  const cols = (S.state.offered_columns || S.state.columns || []);
  const known = new Set(info.key_vars), guessed = new Set(info.sensitive.filter((c) => !known.has(c)));
  el.innerHTML = `<h2>Attacks</h2><div class="row"><div class="card" style="flex:1 1 380px;max-width:520px">
    <p class="small muted">An intruder holds this branch's release and some of a person's values. A seeded share of the records
      is set aside as control records and the others are protected with the branch's steps; each attack's risk is its success on
      the protected records beyond its success on the control records, with a 95% interval.</p>
    <div class="form">
      <div class="field"><label for="atk-aux">What the intruder knows</label><div><select multiple id="atk-aux">${cols.map((c) =>
        `<option ${known.has(c) ? "selected" : ""}>${esc(c)}</option>`).join("")}</select></div><div class="help">default: the key variables</div></div>
      <div class="field"><label for="atk-secret">What the intruder guesses (inference)</label><div><select multiple id="atk-secret">${cols.map((c) =>
        `<option ${guessed.has(c) ? "selected" : ""}>${esc(c)}</option>`).join("")}</select></div><div class="help">default: the sensitive variables</div></div>
      <div class="field"><span class="label">Attacks</span><div>${Object.entries(info.attacks).map(([k, v]) =>
        `<label class="inline"><input type="checkbox" class="atk-kind" value="${esc(k)}" checked> ${esc(v)}</label>`).join(" ")}</div></div>
      <div class="field"><label for="atk-n">Attacks per kind <span class="unit">(predicates or target records)</span></label><div><input type="number" id="atk-n" value="500" min="10" step="1"></div></div>
      <div class="field"><label for="atk-share">Records set aside as control <span class="unit">(%)</span></label><div><input type="number" id="atk-share" value="50" min="5" max="95" step="any"></div></div>
      <div class="field"><label for="atk-tie">Among equally near records <span class="unit">(linkability, inference)</span></label><div><select id="atk-tie">${Object.entries(info.tie_breaks || {}).map(([k, v]) =>
        `<option value="${esc(k)}" ${k === "random" ? "selected" : ""}>${esc(v)}</option>`).join("")}</select></div><div class="help">which released record the intruder takes when several are equally near</div></div>
      <div class="field"><label for="atk-seed">Seed of the attacks <span class="unit">(not the release's seed)</span></label><div><input type="number" id="atk-seed" value="0" min="0" step="1"></div></div>
    </div>
    <p><button id="runatk">Run the attacks</button> <button id="cancelatk" class="danger" hidden>Cancel</button></p><div id="atkprog"></div></div>
    <div class="card" style="flex:2 1 560px" id="atkout"><p class="muted">No attack run yet on this session.</p></div></div>`;
  if (info.runs.length) showRun(info.runs[info.runs.length - 1], info.runs.length);
  $("#runatk").onclick = async () => {
    const body = { aux: $$("#atk-aux option").filter((o) => o.selected).map((o) => o.value),
                   secret: $$("#atk-secret option").filter((o) => o.selected).map((o) => o.value),
                   attacks: $$(".atk-kind").filter((b) => b.checked).map((b) => b.value),
                   n_attacks: parseInt($("#atk-n").value, 10), control_share: parseFloat($("#atk-share").value) / 100,
                   seed: parseInt($("#atk-seed").value, 10), tie_break: $("#atk-tie").value };
    const job = await api("/api/attacks", { method: "POST", body });
    pollJob(job.id, $("#atkprog"), $("#cancelatk"), (res) => showRun(res));
  };
}

const f3 = (x) => Number(x).toFixed(3);
const interval = (a) => `${f3(a.value)} <span class="interval muted">(95% interval ${f3(a.low)} to ${f3(a.high)})</span>`;

function showRun(run, n) {
  const out = $("#atkout");
  if (!out) return;
  out.innerHTML = `<h3>Attack results${n ? ` <span class="muted small">(run ${n}, ${esc(run.time)}, branch ${esc(run.branch)})</span>` : ""}</h3>
    <p class="sentence">${esc(run.intro)}</p>
    <table class="grid small attacktable"><tr><th>attack</th><th>figure</th><th>measured</th></tr>${run.attacks.map((a) =>
      `<tr><td>${esc(a.name)}</td><td>${esc(a.figure)}</td><td class="measured">${interval(a)}</td></tr>`).join("")}</table>
    <ul class="attacks">${run.attacks.map((a) => `<li class="sentence">${esc(a.sentence)}</li>`).join("")}</ul>
    ${run.notes.map((x) => `<p class="warn">${esc(x)}</p>`).join("")}<div class="atkchart"></div>
    <p class="small muted">Took ${fmt(run.seconds, 3)} s.</p>`;
  const risks = run.attacks.filter((a) => a.chance === 0), aucs = run.attacks.filter((a) => a.chance !== 0);
  const draw = (rows, title, axis, lo, hi) => rows.length && chart(chartDiv($(".atkchart", out), title), {
    width: 420, height: 24 * rows.length + 20, data: { values: rows },
    layer: [{ mark: { type: "rule", strokeWidth: 2 }, encoding: { y: { field: "name", type: "nominal", title: null, sort: null },
               x: { field: "low", type: "quantitative", title: axis, scale: { domain: [lo, hi] } }, x2: { field: "high" } } },
            { mark: { type: "point", filled: true, size: 60 }, encoding: { y: { field: "name", type: "nominal", sort: null },
               x: { field: "value", type: "quantitative" },
               tooltip: [{ field: "name", title: "attack" }, { field: "value", format: ".3f" }, { field: "low", format: ".3f" }, { field: "high", format: ".3f" }] } }] });
  draw(risks, "Risk beyond the control records, with its 95% interval", "risk (0: none, 1: every record)", 0, 1);
  draw(aucs, "Membership inference, with its 95% interval", "area under the ROC curve (0.5: chance)", 0, 1);
}
