// Progressive enhancement only: every page works without this file.
"use strict";

// A destructive button asks first.
document.addEventListener("submit", (ev) => {
  const b = ev.submitter;
  if (b && b.dataset.confirm && !window.confirm(b.dataset.confirm)) ev.preventDefault();
});

// The event stream follows the journal: new events are prepended as text (never as HTML).
(function live() {
  const live = document.getElementById("live");
  const body = document.querySelector("#events tbody");
  if (!live || !body) return;
  let cursor = live.dataset.cursor || "";
  async function poll() {
    try {
      const r = await fetch("/console/events/poll?since=" + encodeURIComponent(cursor), { credentials: "same-origin" });
      if (r.ok) {
        const d = await r.json();
        for (const e of (d.events || []).slice().reverse()) {
          const tr = document.createElement("tr");
          for (const v of [e.At, e.Type, e.Object, e.Actor, e.Attrs]) {
            const td = document.createElement("td");
            td.textContent = v || "";
            tr.appendChild(td);
          }
          body.insertBefore(tr, body.firstChild);
        }
        if (d.cursor) cursor = d.cursor;
      }
    } catch (_) { /* the next poll tries again */ }
    setTimeout(poll, 2000);
  }
  setTimeout(poll, 2000);
})();
