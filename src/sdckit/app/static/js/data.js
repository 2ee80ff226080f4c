/* 1 Data: pick or upload a file, the variables, and each variable's frequency table. */
import { $, $$, S, api, chart, esc, fmt, labelled, setState } from "./util.js";

const KIND_WORDS = { numeric: "continuous numbers", integer: "codes (whole numbers)", text: "text" };

export async function renderData(el) {
  const files = await api("/api/files");
  let html = `<h2>Open data</h2><div class="row"><div class="card"><h3>Pick a file</h3>
    <div class="field"><label for="na">Codes meaning missing <span class="unit">(comma separated, optional)</span></label><div><input type="text" id="na" placeholder="-9"></div></div>
    <div class="field"><label for="honour"><input type="checkbox" id="honour" checked> Read the missing codes an SPSS file declares as missing</label>
      <div class="help">as [input] na_values does on the command line; the exported spec holds them</div></div>`;
  for (const f of files.folders) {
    html += `<h4 class="muted small">${esc(f.folder)}</h4>` + (f.files.length ? f.files.map((n) =>
      `<div><button class="secondary tiny pick" data-root="${f.root}" data-name="${esc(n)}">Open</button> ${esc(n)}</div>`).join("")
      : `<div class="muted small">no data files</div>`);
  }
  html += `</div><div class="card"><h3>Upload</h3><p class="small muted">CSV, Parquet, SPSS (.sav), Stata (.dta) or SAS (.sas7bdat). The file stays on this machine.</p>
    <label for="upload">Data file</label> <input type="file" id="upload" accept=".csv,.parquet,.pq,.sav,.zsav,.dta,.sas7bdat"></div></div>
    <div id="vars"></div><div id="freqs"></div>`;
  el.innerHTML = html;
  const opened = (st) => { setState(st); S.variables = null; S.suggestions = null; if (st.has_data) renderVars($("#vars")); };
  $$(".pick", el).forEach((b) => b.onclick = async () => {
    opened(await api("/api/open", { method: "POST", body: { root: +b.dataset.root, name: b.dataset.name,
      na_values: $("#na").value, honour_missing: $("#honour").checked } }));
  });
  $("#upload", el).onchange = async (ev) => {
    const f = ev.target.files[0]; if (!f) return;
    const q = `na_values=${encodeURIComponent($("#na").value || "")}&honour_missing=${$("#honour").checked ? 1 : 0}`;
    opened(await api("/api/upload?" + q, { method: "POST", raw: f, headers: { "X-Filename": f.name } }));
  };
  if (S.state && S.state.has_data) renderVars($("#vars"));
}

async function renderVars(el) {
  const v = S.variables = await api("/api/variables");
  const ex = (c) => c.examples.map((x, i) => labelled(x, (c.example_labels || [])[i])).join(", ");
  el.innerHTML = `<div class="card"><h3>Variables of ${esc(v.file.split(/[\\/]/).pop())}
      <span class="tag">${esc(v.format)}</span> <span class="tag">${v.n_records.toLocaleString("en")} records</span></h3>
    <p class="small muted">Click a variable for its frequency table.</p>
    <table class="grid" id="vartable"><tr><th>variable</th><th>label</th><th>type</th><th>categories</th><th>missing</th><th>value labels</th><th>most frequent values</th></tr>
    ${v.columns.map((c) => `<tr><td><a href="#data" class="freqlink" data-col="${esc(c.name)}"><b>${esc(c.name)}</b></a></td><td>${esc(c.label || "")}</td><td>${esc(KIND_WORDS[c.kind] || c.kind)}</td>
      <td>${fmt(c.n_categories)}</td><td>${c.n_missing ? fmt(c.n_missing) : "–"}</td>
      <td class="small">${c.n_value_labels ? Object.entries(c.value_labels).slice(0, 6).map(([k, l]) => `${esc(l)} (${esc(k)})`).join(", ") + (c.n_value_labels > 6 ? " …" : "") : "–"}</td>
      <td class="small">${ex(c)}</td></tr>`).join("")}</table>
    <p><a class="btn" href="#roles">Next: set roles →</a></p></div>`;
  $$(".freqlink", el).forEach((a) => a.onclick = (e) => { e.preventDefault(); renderFreq($("#freqs"), a.dataset.col); });
}

async function renderFreq(el, col) {
  let r;
  try { r = await api("/api/frequencies?column=" + encodeURIComponent(col)); } catch (e) { return; }
  const rows = r.rows.map((x) => ({ ...x, shown: x.missing ? "missing" : (x.label ? `${x.label} (${x.value})` : String(x.value)) }));
  el.innerHTML = `<div class="card"><h3>${esc(col)}${r.label ? ` — ${esc(r.label)}` : ""}: frequencies</h3><div class="row">
    <table class="grid small" id="freqtable"><tr><th>value</th><th>label</th><th>records</th><th>share</th></tr>
    ${r.rows.map((x) => `<tr><td>${x.missing ? "–" : esc(x.value)}</td><td>${esc(x.label || "")}</td><td>${fmt(x.records)}</td>
      <td>${(100 * x.records / r.n_records).toFixed(1)}%</td></tr>`).join("")}</table><div class="freqchart"></div></div></div>`;
  chart($(".freqchart", el), { width: Math.min(420, 28 * rows.length + 40), height: 150, data: { values: rows.map((x, i) => ({ ...x, order: i })) },
    mark: { type: "bar", color: "#2f6fad" }, encoding: { x: { field: "shown", type: "nominal", sort: { field: "order" }, title: null },
      y: { field: "records", type: "quantitative" }, tooltip: [{ field: "shown", title: "value" }, { field: "records" }] } });
}
