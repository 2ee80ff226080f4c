/* The synthesis panel of a synthesise step card (app/synthesis_view.py): utility and disclosure
   as sentences and small tables, and the one-way utility of each variable as a chart. */
import { chart, chartDiv, esc, fmt } from "./util.js";

const UTILITY_COLUMNS = [["S_pMSE", "standardised pMSE (S_pMSE)"], ["VW", "Voas-Williams (VW)"], ["FT", "Freeman-Tukey (FT)"],
  ["JSD", "Jensen-Shannon divergence (JSD)"], ["SPECKS", "Kolmogorov-Smirnov (SPECKS)"], ["df", "degrees of freedom"]];
const DISCLOSURE_COLUMNS = [["target", "target"], ["unique_in_original", "unique in the original"],
  ["replicated_uniques", "replicated uniques (repU)"], ["certain_in_original", "target certain in the original (Dorig)"],
  ["disclosed_correctly", "disclosed correctly (DiSCO)"], ["tcap", "TCAP"]];

export function renderSynthesis(parent, s, before = null) {
  const box = document.createElement("div");
  box.className = "synthpanel";
  const tables = s.tables || [];
  box.innerHTML = `<h4>Synthesis: utility and disclosure</h4>${s.sentences.map((x) => `<p class="sentence">${esc(x)}</p>`).join("")}
    <p class="small muted">${esc(s.caveat)}</p>
    ${tables.length ? `<h4>Tables compared (original against synthetic counts)</h4><table class="grid small synthutility"><tr><th>table</th>${UTILITY_COLUMNS.map(([, h]) => `<th>${esc(h)}</th>`).join("")}</tr>
      ${tables.map((r) => `<tr><td>${esc(r.table)}</td>${UTILITY_COLUMNS.map(([k]) => `<td>${fmt(r[k] === undefined ? null : r[k], 3)}</td>`).join("")}</tr>`).join("")}</table>` : ""}
    ${s.disclosure.length ? `<h4>Disclosure per target (keys: ${esc(s.keys.join(", "))})</h4><table class="grid small synthdisclosure"><tr>${DISCLOSURE_COLUMNS.map(([, h]) => `<th>${esc(h)}</th>`).join("")}</tr>
      ${s.disclosure.map((r) => `<tr>${DISCLOSURE_COLUMNS.map(([k]) => `<td>${esc(r[k])}</td>`).join("")}</tr>`).join("")}</table>` : ""}
    <div class="synthchart"></div>`;
  parent.insertBefore(box, before);
  if (s.chart.length) {
    chart(chartDiv(box.querySelector(".synthchart"), "One-way utility per variable (standardised pMSE; about 1 is a good match)"), {
      width: Math.min(520, 34 * s.chart.length + 60), height: 160,
      layer: [
        { data: { values: s.chart }, mark: "bar", encoding: { x: { field: "variable", type: "nominal", sort: null, title: null },
          y: { field: "S_pMSE", type: "quantitative", title: "standardised pMSE" }, color: { value: "#2f6fad" },
          tooltip: [{ field: "variable" }, { field: "S_pMSE", format: ".3f", title: "standardised pMSE" }] } },
        { data: { values: [{ one: 1 }] }, mark: { type: "rule", strokeDash: [5, 4], color: "#c62828" }, encoding: { y: { field: "one", type: "quantitative" } } }] });
  }
}
