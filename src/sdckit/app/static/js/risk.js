/* 3 Risk: the original data beside the data after the current steps. */
import { $, api, chart, chartDiv, esc, fmt, getResults, pct } from "./util.js";

export async function renderRisk(el) {
  el.innerHTML = `<h2>Risk at a glance</h2><div class="row"><div class="card" id="risk-orig"></div><div class="card" id="risk-after"></div></div>
    <div class="row"><div class="card fragment" id="riskrecords"></div><div class="card fragment" id="utilitypanel"></div></div>`;
  const [orig, res] = await Promise.all([api("/api/risk"), getResults()]);
  renderRiskInto($("#risk-orig"), orig, "Original data");
  renderRiskInto($("#risk-after"), res.risk_after, `After ${res.n_steps} step${res.n_steps === 1 ? "" : "s"}`);
  await riskRecords(1);
  const u = await api("/api/utility");
  $("#utilitypanel").innerHTML = `<h3>Utility: original against the data after the steps</h3>` + (u.empty ? `<p class="muted">${esc(u.empty)}</p>` : u.html);
}

/* the report's own fragments (escaped HTML): riskiest records, records below k, l-diversity */
async function riskRecords(page) {
  const r = await api(`/api/risk/records?page=${page}`);
  const el = $("#riskrecords");
  if (r.empty) { el.innerHTML = `<h3>Riskiest records</h3><p class="muted">${esc(r.empty)}</p>`; return; }
  el.innerHTML = `<h3>Riskiest records after ${r.after_steps} step${r.after_steps === 1 ? "" : "s"}</h3>${r.riskiest}
    <p><button class="tiny secondary" id="riskprev" ${page <= 1 ? "disabled" : ""}>previous page</button> <button class="tiny secondary" id="risknext">next page</button></p>
    <h3>Records below k = ${r.k}</h3>${r.below_k}${r.ldiversity ? `<h3>l-diversity of the sensitive variables</h3>${r.ldiversity}` : ""}`;
  $("#riskprev").onclick = () => riskRecords(page - 1);
  $("#risknext").onclick = () => riskRecords(page + 1);
}

export function renderRiskInto(el, r, title) {
  if (!r || r.empty) { el.innerHTML = `<h3>${esc(title)}</h3><div class="muted">${esc((r && r.empty) || "no key variables")}</div>`; return; }
  el.innerHTML = `<h3>${esc(title)}</h3><table class="kv">
    <tr><th>key variables</th><td>${r.keys.map(esc).join(", ")}</td></tr>
    <tr><th>records</th><td>${fmt(r.n_records)}</td></tr>
    <tr><th>key combinations</th><td>${fmt(r.n_combinations)}</td></tr>
    <tr><th>sample uniques (f<sub>k</sub> = 1)</th><td class="risk-uniques">${fmt(r.n_sample_uniques)}</td></tr>
    ${Object.entries(r.k_violations).map(([k, v]) => `<tr><th>records with f<sub>k</sub> &lt; ${k}</th><td>${fmt(v)}</td></tr>`).join("")}
    <tr><th>k reached</th><td>${fmt(r.k_reached)}</td></tr>
    <tr><th>global risk (expected re-identifications / records)</th><td class="risk-global">${pct(r.global_risk)}</td></tr>
    <tr><th>expected re-identifications</th><td>${fmt(r.expected_reidentifications)}</td></tr>
    <tr><th>largest individual risk</th><td>${pct(r.max_individual_risk)}</td></tr>
    ${r.household_risk !== undefined ? `<tr><th>household risk</th><td>${pct(r.household_risk)}</td></tr>` : ""}
    ${r.linkage ? `<tr><th>all-columns linkage</th><td class="risk-linkage">${pct(r.linkage.correct_link_share)} of records re-identified by exact matching on all ${r.linkage.columns} columns
      <span class="muted">(${fmt(r.linkage.sample_uniques)} records unique on them)</span></td></tr>` : ""}
    ${r.suda ? `<tr><th>SUDA2</th><td>${fmt(r.suda.n_scored)} records with minimal sample uniques, ${fmt(r.suda.n_msu)} of them, sum of DIS scores ${fmt(r.suda.sum_dis)}</td></tr>` : `<tr><th>SUDA2</th><td class="muted">${esc(r.suda_note || "")}</td></tr>`}
    </table><div class="charts"></div>`;
  const ch = $(".charts", el);
  chart(chartDiv(ch, "records by size of their key class (f_k)"), { width: 250, height: 140, data: { values: r.fk_distribution },
    mark: { type: "bar", color: "#2f6fad" }, encoding: { x: { field: "class", sort: { field: "order" }, title: "f_k" },
      y: { field: "records", type: "quantitative" }, tooltip: [{ field: "class" }, { field: "records" }] } });
  chart(chartDiv(ch, "records by individual risk"), { width: 250, height: 140, data: { values: r.risk_histogram },
    mark: { type: "bar", color: "#c0504d" }, encoding: { x: { field: "band", sort: { field: "order" }, title: "individual risk" },
      y: { field: "records", type: "quantitative", }, tooltip: [{ field: "band" }, { field: "records" }] } });
  if (r.household_histogram) chart(chartDiv(ch, "records by household risk"), { width: 250, height: 140, data: { values: r.household_histogram },
    mark: { type: "bar", color: "#8064a2" }, encoding: { x: { field: "band", sort: { field: "order" }, title: "household risk" },
      y: { field: "records", type: "quantitative" } } });
  if (r.suda) chart(chartDiv(ch, "contribution to uniqueness (SUDA2)"), { width: 250, height: 20 * r.suda.contributions.length,
    data: { values: r.suda.contributions }, mark: { type: "bar", color: "#4bacc6" },
    encoding: { y: { field: "variable", sort: "-x", title: null }, x: { field: "percent", type: "quantitative", title: "% of minimal sample uniques" },
      tooltip: [{ field: "variable" }, { field: "percent", format: ".1f" }] } });
}
