/* 2 Roles: every offered column gets a role; suggestions from the identifier scan. */
import { $, $$, S, api, esc, setState } from "./util.js";
import { renderRiskInto } from "./risk.js";

const ROLES = [["", "no role"], ["key_vars", "key variable"], ["numeric_vars", "numeric"], ["weight", "weight"],
               ["household", "household"], ["strata", "strata"], ["sensitive", "sensitive"]];

export async function renderRoles(el) {
  if (!S.suggestions) S.suggestions = await api("/api/suggestions");
  const sg = S.suggestions, roles = S.state.spec.roles || {};
  const offered = S.state.offered_columns || S.state.columns;
  const removed = S.state.columns.filter((c) => !offered.includes(c));
  const roleOf = (c) => {
    for (const [r] of ROLES) { if (!r) continue; const v = roles[r]; if (v === c || (Array.isArray(v) && v.includes(c))) return r; }
    return "";
  };
  const suggested = (c) => sg.identifiers.includes(c) ? "direct identifier: remove it" : sg.key_vars.includes(c) ? "key variable"
    : sg.numeric_vars.includes(c) ? "numeric" : sg.weight === c ? "weight" : sg.household === c ? "household" : "";
  el.innerHTML = `<h2>Set roles</h2><div class="row"><div class="card" style="flex:2 1 600px">
    <p class="small muted">Key variables are the quasi-identifiers an intruder may know. Suggestions come from the ${esc(sg.source)}.</p>
    <p><button class="secondary" id="applysugg">Use the suggestions</button> <button id="saveroles">Save roles</button></p>
    <table class="grid rolegrid"><tr><th>variable</th><th>role</th><th>suggestion</th></tr>
    ${offered.map((c, i) => `<tr><td><label for="role${i}">${esc(c)}</label></td><td><select id="role${i}" data-col="${esc(c)}">${ROLES.map(([r, l]) =>
      `<option value="${r}" ${roleOf(c) === r ? "selected" : ""}>${l}</option>`).join("")}</select></td>
      <td class="sugg">${esc(suggested(c))} <span class="muted">${esc(sg.reasons[c] || "")}</span>
      ${sg.identifiers.includes(c) ? `<button class="tiny secondary addremove" data-col="${esc(c)}">add a remove step</button>` : ""}</td></tr>`).join("")}
    </table>${removed.length ? `<p class="small muted" id="removedcols">Removed by a remove step, so they hold no role: ${removed.map((c) =>
      `${esc(c)} <button class="tiny secondary addremove" data-col="${esc(c)}" disabled>remove step added</button>`).join(", ")}</p>` : ""}</div>
    <div class="card" id="rolerisk"><h3>Risk with these keys</h3><div class="muted">save the roles to measure</div></div></div>`;
  $("#applysugg", el).onclick = () => {
    $$("select[data-col]", el).forEach((s) => {
      const c = s.dataset.col;
      s.value = sg.key_vars.includes(c) ? "key_vars" : sg.numeric_vars.includes(c) ? "numeric_vars"
        : sg.weight === c ? "weight" : sg.household === c ? "household" : "";
    });
  };
  $("#saveroles", el).onclick = async () => {
    const out = {};
    $$("select[data-col]", el).forEach((s) => {
      const r = s.value; if (!r) return;
      if (r === "weight" || r === "household") out[r] = s.dataset.col; else (out[r] = out[r] || []).push(s.dataset.col);
    });
    setState(await api("/api/roles", { method: "POST", body: { roles: out } }));
    renderRiskInto($("#rolerisk"), await api("/api/risk"), "Risk with these keys (original data)");
  };
  $$(".addremove:not([disabled])", el).forEach((b) => b.onclick = async () => {
    setState(await api("/api/steps", { method: "POST", body: { action: "add", step: { method: "remove", variables: [b.dataset.col] } } }));
    renderRoles(el);
  });
  if ((roles.key_vars || []).length) renderRiskInto($("#rolerisk"), await api("/api/risk"), "Risk with these keys (original data)");
}
