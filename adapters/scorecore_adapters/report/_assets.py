"""The page's inline style sheet and script (no network asset, no library)."""

from __future__ import annotations

from typing import Final

CSS: Final = """
:root{--fg:#1d232a;--muted:#5c6670;--line:#d9dee3;--bg:#fff;--soft:#f4f6f8;--ok:#2e7d32;
--bad:#c62828;--warn:#b26a00;--bar:#3f6fb5}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);
background:var(--bg);margin:0;padding:0 24px 48px}
header{border-bottom:1px solid var(--line);margin-bottom:16px}
h1{font-size:20px;margin:16px 0 4px}h2{font-size:16px;margin:28px 0 8px}
h3{font-size:14px;margin:14px 0 6px}
.muted{color:var(--muted)}
table{border-collapse:collapse;margin:4px 0}
th,td{border-bottom:1px solid var(--line);padding:4px 10px;text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.verdict{display:inline-block;padding:2px 10px;border-radius:10px;font-weight:600;color:#fff}
.verdict.passed,.v-unchanged{background:var(--ok)}.verdict.failed,.v-regressed{background:var(--bad)}
.v-improved{background:var(--bar)}.verdict.none,.v-none,.v-not_enough_pairs{background:var(--muted)}
.changed{color:var(--warn);font-size:12px;font-weight:600}
.caveat{color:var(--warn);font-weight:600}#gates{margin:4px 0;padding-left:20px}
.pass{color:var(--ok);font-weight:600}.fail{color:var(--bad);font-weight:600}
.charts{display:flex;flex-wrap:wrap;gap:18px}
.chart-card{border:1px solid var(--line);border-radius:6px;padding:8px 10px}
svg.chart text{font-size:10px;fill:var(--muted)}svg.chart .axis{stroke:var(--muted)}
svg.chart .bar{fill:var(--bar)}.st-scored{fill:var(--ok)}.st-not-scorable{fill:var(--warn)}
.st-failed{fill:var(--bad)}
pre{white-space:pre-wrap;word-break:break-word;background:var(--soft);padding:6px 8px;
margin:2px 0 8px;max-height:320px;overflow:auto;font-size:12px}
.cause{white-space:pre-wrap;word-break:break-word}
#controls{display:flex;gap:10px;flex-wrap:wrap;align-items:center;margin:6px 0}
#controls input{min-width:260px}
#items td{cursor:pointer}#items tr:hover td{background:var(--soft)}
#items tr.selected td{background:#e3ecf8}
.status-scored{color:var(--ok)}.status-not_scorable{color:var(--warn)}.status-failed{color:var(--bad)}
#drill{position:fixed;top:0;right:0;width:min(46vw,720px);height:100vh;overflow:auto;
background:var(--bg);border-left:1px solid var(--line);box-shadow:-4px 0 12px rgba(0,0,0,.08);
padding:4px 16px 24px}
#drill .close{float:right;margin-top:14px}
#drill[hidden]{display:none}
.delta-neg{color:var(--bad)}.delta-pos{color:var(--ok)}
noscript{color:var(--bad)}
"""

JS: Final = r"""
"use strict";
async function unpack() {
  // The items' data: gzip-compressed JSON in base64 (no library: the browser's own gzip).
  const text = document.getElementById("report-data").textContent.trim();
  const bytes = Uint8Array.from(atob(text), function (c) { return c.charCodeAt(0); });
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

function explorer(data, started) {
  const STATUS = ["scored", "not_scorable", "failed"];
  const PAGE = 100;
  const rows = data.rows;
  const byItem = new Map();
  rows.forEach(function (r, i) {
    const list = byItem.get(r[0]);
    if (list) { list.push(i); } else { byItem.set(r[0], [i]); }
  });
  const itemIds = new Map(data.items.map(function (it, i) { return [it[0], i]; }));
  const hasBase = rows.some(function (r) { return r[6] !== ""; });
  const $ = function (id) { return document.getElementById(id); };
  const scorerSel = $("f-scorer"), statusSel = $("f-status"), search = $("f-search");
  const body = $("items-body"), info = $("items-info"), drill = $("drill");
  let page = 0, shown = [];

  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    if (cls) { node.className = cls; }
    return node;
  }
  function fmt(v) {
    return (v === null || v === undefined || v === "") ? "-" : Number(v).toFixed(3);
  }
  function show(v) { return typeof v === "string" ? v : JSON.stringify(v, null, 2); }
  function haystack(r) {
    const item = data.items[r[0]];
    const cause = r[5] >= 0 ? data.causes[r[5]].join(" ") : "";
    return (item[0] + " " + r[4] + " " + cause + " " + show(item[2])).toLowerCase();
  }
  data.scorers.forEach(function (s) { scorerSel.appendChild(el("option", s)); });

  function filter() {
    const sc = scorerSel.value, st = statusSel.value, q = search.value.trim().toLowerCase();
    shown = [];
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      if (sc && data.scorers[r[1]] !== sc) { continue; }
      if (st && STATUS[r[2]] !== st) { continue; }
      if (q && haystack(r).indexOf(q) < 0) { continue; }
      shown.push(i);
    }
    page = 0;
    render();
  }

  function render() {
    body.textContent = "";
    const start = page * PAGE;
    shown.slice(start, start + PAGE).forEach(function (i) {
      const r = rows[i];
      const tr = el("tr");
      tr.dataset.item = String(r[0]);
      tr.appendChild(el("td", data.items[r[0]][0]));
      tr.appendChild(el("td", data.scorers[r[1]]));
      tr.appendChild(el("td", STATUS[r[2]], "status-" + STATUS[r[2]]));
      tr.appendChild(el("td", fmt(r[3]), "num"));
      if (hasBase) {
        const d = (r[3] === null || r[6] === "" || r[6] === null) ? "" : r[3] - r[6];
        tr.appendChild(el("td", d === "" ? "-" : (d > 0 ? "+" : "") + d.toFixed(3),
          "num " + (d < 0 ? "delta-neg" : d > 0 ? "delta-pos" : "")));
      }
      const text = r[5] >= 0 ? data.causes[r[5]][2] : r[4];
      tr.appendChild(el("td", text.length > 160 ? text.slice(0, 159) + "\u2026" : text));
      tr.addEventListener("click", function () { openItem(r[0]); });
      body.appendChild(tr);
    });
    const last = Math.min(shown.length, start + PAGE);
    info.textContent = shown.length ? (start + 1) + "\u2013" + last + " of " + shown.length +
      " rows" : "no rows match";
    $("prev").disabled = page === 0;
    $("next").disabled = start + PAGE >= shown.length;
  }

  function section(parent, title, value) {
    if (value === undefined || value === null || value === "") { return; }
    parent.appendChild(el("h3", title));
    parent.appendChild(el("pre", show(value)));
  }

  function openItem(itemIndex) {
    const item = data.items[itemIndex];
    if (!item) { return; }
    drill.textContent = "";
    drill.hidden = false;
    drill.dataset.item = item[0];
    const close = el("button", "close", "close");
    close.addEventListener("click", function () { drill.hidden = true; });
    drill.appendChild(close);
    drill.appendChild(el("h2", "Item " + item[0]));
    section(drill, "Input", item[1]);
    section(drill, "Output", item[2]);
    (byItem.get(itemIndex) || []).forEach(function (i) {
      const r = rows[i], d = r[7] || {};
      const box = el("div", null, "scorer-run");
      box.dataset.scorer = data.scorers[r[1]];
      box.appendChild(el("h3", data.scorers[r[1]] + ": " + STATUS[r[2]] +
        (r[3] === null ? "" : " " + fmt(r[3])) + (hasBase && r[6] !== "" ? " (baseline " +
        fmt(r[6]) + ")" : "")));
      if (r[4]) { box.appendChild(el("p", "Reason: " + r[4])); }
      if (r[5] >= 0) {
        const c = data.causes[r[5]];
        box.appendChild(el("p", "Cause (" + c[0] + (c[1] ? " at " + c[1] : "") + "):"));
        box.appendChild(el("pre", c[2], "cause"));
      }
      if (d.pn) {
        // A panel: [member, status, score, vote, reason or cause, replaces] per member.
        box.appendChild(el("h3", "Panel members"));
        const table = el("table", null, "members");
        const head = el("tr");
        ["member", "status", "score", "vote", "reason / cause", "replaces"].forEach(
          function (h) { head.appendChild(el("th", h)); });
        table.appendChild(head);
        d.pn.forEach(function (m) {
          const tr = el("tr");
          tr.appendChild(el("td", m[0]));
          tr.appendChild(el("td", m[1]));
          tr.appendChild(el("td", fmt(m[2]), "num"));
          tr.appendChild(el("td", m[3] === null ? "-" : (m[3] ? "pass" : "fail")));
          tr.appendChild(el("td", m[4] || ""));
          tr.appendChild(el("td", m[5] || ""));
          table.appendChild(tr);
        });
        box.appendChild(table);
      }
      section(box, "Preprocess step result", d.pre);
      section(box, "Analyze step result", d.an);
      Object.keys(d.pr || {}).forEach(function (k) {
        section(box, "Prompt (" + k + ")", d.pr[k]);
      });
      (d.j || []).forEach(function (j, n) {
        // [step, status, model, calls, prompt, reply, [in, out, total tokens], error]
        const head = "Judge call " + (n + 1) + " (" + j[0] + ", " + j[1] + ", " +
          (j[2] || "model ?") + ", " +
          (typeof j[3] === "number" ? j[3] : "?") + " model call(s))";
        const call = el("div", null, "judge-call");
        call.appendChild(el("h3", head));
        section(call, "Judge prompt", j[4]);
        section(call, "Judge reply", j[5]);
        if (j[6]) {
          section(call, "Usage", "input " + j[6][0] + " tokens, output " + j[6][1] +
            " tokens, total " + j[6][2]);
        }
        section(call, "Judge error", j[7]);
        box.appendChild(call);
      });
      section(box, "Not scorable", d.ns);
      section(box, "Replaced before storing", d.sa);
      drill.appendChild(box);
    });
    Array.prototype.forEach.call(body.rows, function (tr) {
      tr.classList.toggle("selected", tr.dataset.item === String(itemIndex));
    });
  }

  function fromHash() {
    const params = new URLSearchParams(location.hash.slice(1));
    if (params.has("scorer")) { scorerSel.value = params.get("scorer"); }
    if (params.has("status")) { statusSel.value = params.get("status"); }
    if (params.has("q")) { search.value = params.get("q"); }
    filter();
    if (params.has("item") && itemIds.has(params.get("item"))) {
      openItem(itemIds.get(params.get("item")));
    }
  }

  scorerSel.addEventListener("change", filter);
  statusSel.addEventListener("change", filter);
  search.addEventListener("input", filter);
  $("prev").addEventListener("click", function () { page -= 1; render(); });
  $("next").addEventListener("click", function () { page += 1; render(); });
  window.addEventListener("hashchange", fromHash);
  fromHash();
  document.body.dataset.renderMs = (performance.now() - started).toFixed(1);
  // Milliseconds from navigation start (reading and parsing the file included) to ready.
  document.body.dataset.loadedMs = performance.now().toFixed(1);
  document.body.dataset.ready = "1";
}

(function () {
  const started = performance.now();
  if (typeof DecompressionStream === "undefined") {
    document.getElementById("items-info").textContent = "This browser cannot unpack the " +
      "item data (it needs DecompressionStream: Chrome 80, Firefox 113, Safari 16.4 or later).";
    return;
  }
  unpack().then(function (data) { explorer(data, started); }, function (error) {
    document.getElementById("items-info").textContent = "The item data could not be read: " +
      error;
  });
})();
"""

VIEW_JS: Final = r"""
(function () {
  "use strict";
  // Only when the page was made while a `scorecore view` served the batch's store: each row
  // of the items table gets a link to its run's page there (rows are drawn on every page
  // turn and filter, so each newly drawn row is linked as it appears).
  const prefix = JSON.parse(document.getElementById("view-links").textContent).run;
  const body = document.getElementById("items-body");
  function link(tr) {
    if (!tr.firstChild || tr.querySelector("a.view-run")) { return; }
    const a = document.createElement("a");
    a.className = "view-run";
    a.href = prefix + encodeURIComponent(tr.firstChild.textContent);
    a.rel = "noreferrer";
    a.textContent = "open in view";
    // The row's own click opens the drill-down; the link only navigates.
    a.addEventListener("click", function (event) { event.stopPropagation(); });
    const td = document.createElement("td");
    td.appendChild(a);
    tr.appendChild(td);
  }
  function linkAll() { Array.prototype.forEach.call(body.rows, link); }
  new MutationObserver(linkAll).observe(body, {childList: true});
  linkAll();
})();
"""
