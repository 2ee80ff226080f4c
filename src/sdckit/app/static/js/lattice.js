/* The lattice view of a generalise step (ARX's solution space): the nodes the search checked,
   drawn by height and coloured by what the search knows, the chosen node and its neighbours.
   Every text comes from figures.lattice_view in words; nothing here is shown as JSON. */
import { esc, fmt } from "./util.js";

const signed = (d) => (d === null || d === undefined ? "" : ` <span class="muted">(${d > 0 ? "+" : d < 0 ? "−" : "±"}${fmt(Math.abs(d))})</span>`);

function nodeHtml(d) {
  return `<b>${esc(d.role)}</b> · ${esc(d.verdict)} · ${esc(d.checked)}<br>${esc(d.levels)}<br>${esc(d.figures)}`;
}

function draw(el, lat, pick) {
  if (typeof vegaEmbed === "undefined") { el.textContent = "(charts unavailable)"; return; }
  const statuses = lat.legend.map((l) => l.status), colours = lat.legend.map((l) => l.colour);
  const x = { field: "x", type: "quantitative", axis: null, scale: { domain: [0, 1] } };
  const y = { field: "height", type: "quantitative", title: "height (sum of the levels)",
              scale: { domain: [0, Math.max(1, lat.max_height)] }, axis: { tickMinStep: 1 } };
  const tooltip = [{ field: "role", title: "node" }, { field: "verdict", title: "privacy models" },
                   { field: "levels", title: "levels" }, { field: "figures", title: "figures" }, { field: "checked", title: "how known" }];
  const spec = {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json", width: 560, height: 260,
    config: { view: { stroke: null }, axis: { labelFontSize: 11, titleFontSize: 11 } },
    layer: [
      { data: { values: lat.edges }, mark: { type: "rule", color: "#1f3a56", strokeWidth: 1 },
        encoding: { x, y, x2: { field: "x2" }, y2: { field: "height2" } } },
      { data: { values: lat.points.filter((p) => p.role !== "chosen node") },
        mark: { type: "point", filled: true, size: 60, stroke: "#333", strokeWidth: 0.4, opacity: 1, cursor: "pointer" },
        encoding: { x, y, tooltip, color: { field: "status", type: "nominal", title: "what the search knows",
                                            scale: { domain: statuses, range: colours }, legend: null } } },
      { data: { values: lat.points.filter((p) => p.role === "neighbour") },
        mark: { type: "point", filled: false, size: 190, stroke: "#1f3a56", strokeWidth: 1.5, cursor: "pointer" },
        encoding: { x, y, tooltip } },
      { data: { values: lat.points.filter((p) => p.role === "chosen node") },
        mark: { type: "point", shape: "diamond", filled: true, size: 260, color: "#1f3a56", stroke: "#ffb300", strokeWidth: 2, cursor: "pointer" },
        encoding: { x, y, tooltip } },
    ],
  };
  vegaEmbed(el, spec, { actions: false, renderer: "svg" })
    .then((r) => r.view.addEventListener("click", (ev, item) => { if (item && item.datum && item.datum.levels) pick(item.datum); }))
    .catch((e) => { el.textContent = "chart error: " + e.message; });
}

export function renderLattice(parent, lat, before) {
  const box = document.createElement("div");
  box.className = "lattice";
  const ch = lat.chosen;
  const legend = lat.legend.map((l) => `<li><span class="swatch" style="background:${esc(l.colour)}"></span>${esc(l.status)}${
    l.count === null || l.count === undefined ? "" : `: ${fmt(l.count)}`}</li>`).join("");
  const rows = lat.neighbours.map((r) => `<tr><td>${esc(r.change)}</td><td class="${r.satisfied ? "ok" : "fail"}">${esc(r.verdict)}</td>
    <td>${fmt(r.n_suppressed)}${signed(r.d_suppressed)}</td><td>${fmt(r.n_classes)}${signed(r.d_classes)}</td>
    <td>${r.metric === null ? "–" : fmt(r.metric)}${signed(r.d_metric)}</td><td class="muted">${esc(r.known)}</td></tr>`).join("");
  box.innerHTML = `<h4>Solution space of the lattice search</h4>
    <p class="sentence">${esc(lat.sentence)}</p>
    <p class="latchosen"><b>Chosen node</b>: ${esc(ch.levels)}. It suppresses ${fmt(ch.n_suppressed)} records and forms ${fmt(ch.n_classes)} classes; ${esc(lat.metric)} ${fmt(ch.metric)}.</p>
    <div class="latrow"><div class="latchart"></div><ul class="latlegend">${legend}<li><span class="swatch ring"></span>neighbour of the chosen node</li></ul></div>
    <p class="small muted latcap">${esc(lat.cap_note)} Bottom: the original data; top: every quasi-identifier at its highest level.</p>
    <div class="latpick small">Point at or click a node to read its levels and figures.</div>
    ${rows ? `<h4>One step coarser or finer</h4><table class="grid small latnb"><tr><th>change</th><th>privacy models</th><th>records suppressed</th>
      <th>classes</th><th>${esc(lat.metric)}</th><th>known how</th></tr>${rows}</table>
      <p class="small muted">Differences from the chosen node in brackets.</p>` : ""}
    ${lat.notes.length ? `<ul class="small">${lat.notes.map((n) => `<li>${esc(n)}</li>`).join("")}</ul>` : ""}`;
  parent.insertBefore(box, before || null);
  const pickEl = box.querySelector(".latpick");
  draw(box.querySelector(".latchart"), lat, (d) => { pickEl.innerHTML = nodeHtml(d); });
}
