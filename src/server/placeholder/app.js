// Placeholder dashboard: lists the runs and refreshes on every server-sent event.
// Text goes in with textContent only: names and values are never parsed as HTML.
"use strict";
function cell(tr, text) {
  const td = document.createElement("td");
  td.textContent = text;
  tr.appendChild(td);
}
function fmt(v, scale, digits) {
  return v === null || v === undefined ? "-" : (v * scale).toFixed(digits);
}
async function load() {
  const res = await fetch("/api/runs");
  const body = await res.json();
  const tbody = document.querySelector("#runs tbody");
  tbody.replaceChildren();
  for (const r of body.runs) {
    const tr = document.createElement("tr");
    const s = r.summary || {};
    cell(tr, r.name);
    cell(tr, String(r.steps));
    cell(tr, s.mfu === null || s.mfu === undefined ? "-" : fmt(s.mfu, 100, 1) + " %");
    cell(tr, fmt(s.tokens_per_second, 1, 0));
    cell(tr, fmt(s.step_time_s, 1, 3));
    cell(tr, r.live ? "yes" : "");
    tbody.appendChild(tr);
  }
}
load();
const events = new EventSource("/api/events");
let pending = null;
function soon() {
  if (pending === null) pending = setTimeout(() => { pending = null; load(); }, 500);
}
events.addEventListener("steps", soon);
events.addEventListener("run", soon);
