/* sdckit workbench: the browser side, in native ES modules (no build step). Charts with
   Vega-Lite (vega.js is the bundle of the installed vl-convert package, served by the app: no
   network needed). One module per page; widgets.js maps every parameter kind to its widget. */
import { $, PAGES, S, api, go, render, setState } from "./util.js";
import { renderData } from "./data.js";
import { renderRoles } from "./roles.js";
import { renderRisk } from "./risk.js";
import { renderSteps } from "./steps.js";
import { renderCompare } from "./compare.js";
import { renderExplore } from "./explore.js";
import { renderRelease } from "./release.js";
import { renderTables } from "./tables.js";
import { renderHierarchy } from "./hierarchy.js";
import { renderAttacks } from "./attacks.js";

Object.assign(PAGES, { data: renderData, roles: renderRoles, risk: renderRisk, steps: renderSteps, compare: renderCompare,
                       explore: renderExplore, release: renderRelease, tables: renderTables,
                       hierarchy: renderHierarchy, attacks: renderAttacks });

window.addEventListener("hashchange", () => go((location.hash || "#data").slice(1)));

const history = (body) => async () => { setState(await api("/api/history", { method: "POST", body })); render(S.page); };
$("#undo").onclick = history({ action: "undo" });
$("#redo").onclick = history({ action: "redo" });
$("#branch").onchange = async (e) => { setState(await api("/api/history", { method: "POST", body: { action: "switch", name: e.target.value } })); render(S.page); };
$("#historylist").onchange = async (e) => { setState(await api("/api/history", { method: "POST", body: { action: "goto", pos: +e.target.value } })); render(S.page); };
$("#newbranch").onclick = async () => {
  const name = prompt("Name of the new branch (a copy of the history up to here):", "alternative " + S.state.history.branches.length);
  if (!name) return;
  setState(await api("/api/history", { method: "POST", body: { action: "branch", name } })); render(S.page);
};
document.addEventListener("keydown", (e) => {
  if (!(e.ctrlKey || e.metaKey) || ["INPUT", "TEXTAREA", "SELECT"].includes(document.activeElement.tagName)) return;
  if (e.key === "z" && !$("#undo").disabled) { e.preventDefault(); $("#undo").click(); }
  if (e.key === "y" && !$("#redo").disabled) { e.preventDefault(); $("#redo").click(); }
});

setState(await api("/api/state"));
go((location.hash || (S.state.has_data ? "#roles" : "#data")).slice(1));
