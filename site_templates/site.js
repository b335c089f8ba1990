// Sortable tables: each column header holds a <button>, so sorting works with the
// mouse and the keyboard (Tab to the header, Enter or Space). aria-sort tells
// assistive technology the current order.
(function () {
  "use strict";
  function key(cell) {
    var v = cell.getAttribute("data-sort");
    if (v === null) v = cell.textContent.trim();
    var n = parseFloat(v);
    return isNaN(n) || v === "" ? { num: false, v: v.toLowerCase() } : { num: true, v: n };
  }
  function compare(a, b) {
    if (a.num && b.num) return a.v - b.v;
    if (a.num !== b.num) return a.num ? -1 : 1; // numbers before missing values
    return a.v < b.v ? -1 : a.v > b.v ? 1 : 0;
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var headers = table.querySelectorAll("thead th");
    headers.forEach(function (th, col) {
      var button = th.querySelector("button");
      if (!button) return;
      button.addEventListener("click", function () {
        var dir = th.getAttribute("aria-sort") === "descending" ? "ascending" : "descending";
        headers.forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", dir);
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (r1, r2) {
          var c = compare(key(r1.cells[col]), key(r2.cells[col]));
          return dir === "ascending" ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
})();
