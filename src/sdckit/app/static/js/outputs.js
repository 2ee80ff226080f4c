/* The checker's queue: list outputs with their checks in words, approve or reject each with a
   reason, record a researcher's exception request, release the approved ones. */

const CSRF = document.querySelector('meta[name="csrf"]').content;
const $ = (sel, el = document) => el.querySelector(sel);
const esc = (s) => String(s === undefined || s === null ? "" : s).replace(/[&<>"']/g,
  (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));

function showError(msg) { const e = $("#error"); e.textContent = msg || ""; e.hidden = !msg; }

async function api(path, body = null) {
  const opts = { method: body === null ? "GET" : "POST", credentials: "same-origin", headers: {} };
  if (body !== null) {
    opts.headers["X-CSRF-Token"] = CSRF;
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  $("#busy").hidden = false;
  try {
    const r = await fetch(path, opts);
    const data = await r.json();
    if (!r.ok) { showError(data.error || `${r.status} ${r.statusText}`); throw new Error(data.error); }
    showError("");
    return data;
  } finally { $("#busy").hidden = true; }
}

function card(o) {
  const words = o.words.map((w) => w.startsWith("  ")
    ? `<li class="detail">${esc(w.trim())}</li>` : `<li>${esc(w)}</li>`).join("");
  const d = o.decision;
  const decision = d ? `<div class="decision ${esc(d.verdict)}">${d.verdict === "approved" ? "Approved" : "Rejected"}
      by ${esc(d.checker)}: ${esc(d.reason)}</div>` : `<div class="decision muted">No decision yet</div>`;
  const exception = o.exception ? `<div class="exception"><b>Exception request:</b> ${esc(o.exception)}</div>` : "";
  return `<div class="card out st-${esc(o.status)}" data-id="${esc(o.id)}">
    <div class="head"><span class="id">${esc(o.id)}</span><span class="status st-${esc(o.status)}">${esc(o.status)}</span>
      <span class="muted">${esc(o.type)}${o.method ? " · " + esc(o.method) : ""}</span>
      <span class="muted small">${esc(o.files.join(", "))}</span></div>
    ${o.command ? `<code>${esc(o.command)}</code>` : ""}
    <ul class="words">${words}</ul>${exception}${decision}
    <div class="acts"><label class="visually-hidden" for="reason-${esc(o.id)}">reason</label>
      <input type="text" id="reason-${esc(o.id)}" class="reason" placeholder="reason (the researcher reads it)">
      <button class="approve">Approve</button><button class="danger reject">Reject</button>
      <button class="secondary exception">Record exception request</button></div>
  </div>`;
}

async function load() {
  const q = await api("/api/outputs");
  $("#resultsname").textContent = `${q.results} (${q.tool || "results"}): ${q.outputs.length} outputs`;
  const n = (s) => q.outputs.filter((o) => o.status === s).length;
  const approved = q.outputs.filter((o) => o.decision && o.decision.verdict === "approved").length;
  $("#summary").innerHTML = `<b>${n("pass")}</b> pass, <b>${n("review")}</b> need review, <b>${n("fail")}</b> fail
    · <b>${approved}</b> approved, <b>${q.undecided.length}</b> waiting for a decision`;
  $("#queue").innerHTML = q.outputs.map(card).join("");
  $("#release").disabled = !q.can_release || q.undecided.length > 0 || approved === 0;
  $("#release").title = q.undecided.length ? "every output needs a decision first" : "";
}

document.addEventListener("click", async (ev) => {
  const btn = ev.target.closest("button");
  if (!btn) return;
  if (btn.id === "release") {
    const out = await api("/api/outputs/release", { name: $("#relname").value, overwrite: $("#overwrite").checked });
    $("#releaseout").innerHTML = `<p class="ok">${esc(out.verdict)}</p><p>Written to <b>${esc(out.folder)}</b>:
      ${esc(out.files.join(", "))}${out.signed ? " (certificate signed)" : ""}</p>`;
    return;
  }
  const box = btn.closest(".out");
  if (!box) return;
  const id = box.dataset.id;
  const reason = $(".reason", box).value;
  try {
    if (btn.classList.contains("exception")) {
      await api(`/api/outputs/${encodeURIComponent(id)}/exception`, { reason });
    } else {
      const action = btn.classList.contains("approve") ? "approve" : "reject";
      await api(`/api/outputs/${encodeURIComponent(id)}/${action}`, { reason, checker: $("#checker").value });
    }
    await load();
  } catch (e) { /* shown in the error bar */ }
});

load().catch(() => {});
