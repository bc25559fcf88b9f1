// Sort a table by the clicked column (again: reverse). Numbers as numbers, dashes last, text by locale.
// A click on a failed claim shows its whole claim and note (they are cut to a few lines at first).
(function () {
  "use strict";
  document.querySelectorAll("article.failure").forEach(function (card) {
    card.addEventListener("click", function (event) {
      if (event.target.closest("a") === null) card.classList.toggle("clamped");
    });
  });
  function key(cell, type) {
    const raw = (cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent).trim();
    if (type !== "number" && type !== "rank") return raw.toLowerCase();
    const text = raw.replace(/\u2212/g, "-").replace(/\u221e/g, "Infinity").split(/\s/)[0];
    const value = Number(text);
    return Number.isNaN(value) || raw === "\u2014" ? null : value;
  }
  function compare(a, b) {
    if (a === b) return 0;
    if (a === null) return 1;
    if (b === null) return -1;
    return typeof a === "number" ? a - b : a.localeCompare(b);
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    const headers = Array.from(table.tHead.rows[0].cells);
    headers.forEach(function (th, column) {
      th.addEventListener("click", function () {
        const descending = th.getAttribute("aria-sort") === "ascending";
        headers.forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", descending ? "descending" : "ascending");
        const body = table.tBodies[0];
        const rows = Array.from(body.rows).map(function (row, index) {
          return { row: row, index: index, key: key(row.cells[column], th.dataset.type) };
        });
        rows.sort(function (a, b) {
          const order = a.key === null || b.key === null ? compare(a.key, b.key)
            : (descending ? -1 : 1) * compare(a.key, b.key);
          return order || a.index - b.index;
        });
        rows.forEach(function (item) { body.appendChild(item.row); });
      });
    });
  });
})();
