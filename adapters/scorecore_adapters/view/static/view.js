// scorecore view: labelling from the keyboard. No inline script anywhere (the pages' CSP
// forbids it); every text written into the page goes through textContent, never innerHTML.
"use strict";
(function () {
  const rows = Array.from(document.querySelectorAll("tr[data-run]"));
  const csrf = document.querySelector('meta[name="csrf"]').getAttribute("content");
  const readOnly = document.body.dataset.readOnly === "yes";
  const note = document.getElementById("note");
  const status = document.getElementById("status");
  let current = rows.length ? 0 : -1;

  function select(index) {
    if (!rows.length) return;
    current = Math.max(0, Math.min(rows.length - 1, index));
    rows.forEach(function (row, i) { row.classList.toggle("selected", i === current); });
    rows[current].scrollIntoView({ block: "nearest" });
  }

  function say(text) { if (status) status.textContent = text; }

  function label(value) {
    if (readOnly || current < 0) return;
    const row = rows[current];
    const body = new URLSearchParams({
      batch: row.dataset.batch, item: row.dataset.item, scorer: row.dataset.scorer,
      value: value, queued: row.dataset.queued || "", note: note ? note.value : "",
    });
    fetch("/labels", {
      method: "POST", body: body, credentials: "same-origin",
      headers: { "x-scorecore-csrf": csrf, "accept": "application/json" },
    }).then(function (response) {
      return response.json().then(function (data) { return [response.ok, data]; });
    }).then(function (result) {
      const ok = result[0], data = result[1];
      if (!ok) { say("not saved: " + data.error); return; }
      const cell = row.querySelector("td.label");
      const shown = data.label.label === true ? "pass" : data.label.label === false ? "fail"
        : String(data.label.label);
      cell.textContent = shown + (data.label.note ? " " + data.label.note : "");
      row.dataset.labelled = "yes";
      if (note) note.value = "";
      say("saved " + shown + " for " + row.dataset.item);
      select(current + 1);
    }).catch(function (error) { say("not saved: " + error); });
  }

  // A digit labels on the run's scorer's scale: the row carries what each digit gives
  // (pass/fail, a verdict value, d/9 of a continuous range), as the page's legend says.
  function digit(key) {
    if (readOnly || current < 0) return;
    const row = rows[current];
    let given = {};
    try { given = JSON.parse(row.dataset.digits || "{}"); } catch (error) { given = {}; }
    if (!Object.prototype.hasOwnProperty.call(given, key)) {
      say(key + " is not on the scale of " + row.dataset.scorer);
      return;
    }
    label(String(given[key]));
  }

  document.addEventListener("keydown", function (event) {
    if (event.target === note) {
      if (event.key === "Enter" || event.key === "Escape") { note.blur(); event.preventDefault(); }
      return;
    }
    if (event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "j") select(current + 1);
    else if (event.key === "k") select(current - 1);
    else if (/^[0-9]$/.test(event.key)) digit(event.key);
    else if (event.key === "n" && note) { note.focus(); event.preventDefault(); }
    else if (event.key === "Enter" && current >= 0 && rows[current].dataset.href) {
      window.location.assign(rows[current].dataset.href);
    } else return;
    event.preventDefault();
  });
  select(0);
})();
