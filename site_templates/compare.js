// Compare-systems view: every system's answer to the same instance, side by side.
// Data comes in script files (index.js, chunk_NNNN.js), as in the instance browser;
// every string is inserted with textContent.
(function () {
  "use strict";
  var PAGE_SIZE = 20;
  var root = document.getElementById("compare");
  if (!root) return;
  var base = root.getAttribute("data-base");
  var index = null;
  var data = window.HOLISTIC_DATA.loader(base, "compare-status");
  var chunks = data.chunks, loadChunk = data.loadChunk, el = window.HOLISTIC_DATA.el;
  var state = { filter: "all", page: 0 };
  var VERDICT = { "1": ["correct", "✓ correct"], "0": ["wrong", "✗ wrong"], "-1": ["unknown", "? not scored"] };

  function status(text) { document.getElementById("compare-status").textContent = text; }
  window.HOLISTIC_COMPARE_INDEX = function (payload) { index = payload; setup(); render(); };
  window.HOLISTIC_COMPARE_CHUNK = data.deliver;

  function setup() {
    document.getElementById("c-filter").addEventListener("change", function (e) {
      state.filter = e.target.value; state.page = 0; render();
    });
    document.getElementById("prev").addEventListener("click", function () { if (state.page > 0) { state.page -= 1; render(); } });
    document.getElementById("next").addEventListener("click", function () { state.page += 1; render(); });
  }

  function keep(row) {
    var n = index.systems.length;
    if (state.filter === "differ") return row[2] === 1;
    if (state.filter === "split") return row[1] > 0 && row[1] < n;
    if (state.filter === "none") return row[1] === 0;
    if (state.filter === "every") return row[1] === n;
    return true;
  }

  function fmt(v) {
    if (v == null) return "–";
    return Number.isInteger(v) ? String(v) : v.toPrecision(3);
  }

  function answerText(pred) {
    if (!pred) return "(no answer recorded)";
    if (pred.error) return "(request failed: " + pred.error + ")";
    var text = pred.text == null ? "" : String(pred.text);
    if (pred.parsed) text += "\n→ parsed: " + pred.parsed;
    if (pred.choice_text) text += "\n→ " + pred.choice_text;
    return text;
  }

  function renderRecord(rec) {
    var art = el("article", { class: "record compare-record", "data-id": rec.id });
    art.appendChild(el("h3", null, rec.id));
    var top = el("div", { class: "answer" });
    var left = el("div");
    left.appendChild(el("div", { class: "label" }, "Input"));
    var p = el("pre", { class: "text input", dir: "auto" }); p.textContent = rec.input; left.appendChild(p);
    top.appendChild(left);
    var right = el("div");
    right.appendChild(el("div", { class: "label" }, "References"));
    var ol = el("ol", { class: "refs", type: "A" });
    rec.references.forEach(function (r) {
      var li = el("li", { class: r.correct ? "correct" : "" });
      li.appendChild(el("span", { class: "mark" }, r.correct ? "✓ " : ""));
      li.appendChild(el("bdi", { class: "ref", dir: "auto" }, r.output));
      ol.appendChild(li);
    });
    right.appendChild(ol);
    top.appendChild(right);
    art.appendChild(top);
    var grid = el("div", { class: "systems" });
    rec.answers.forEach(function (a, i) {
      var v = a ? String(a.correct) : "-1";
      var card = el("section", { class: "system " + VERDICT[v][0] });
      var h = el("h4", null, index.systems[i] + " ");
      h.appendChild(el("span", { class: "badge " + VERDICT[v][0] }, VERDICT[v][1]));
      card.appendChild(h);
      var pre = el("pre", { class: "completion " + VERDICT[v][0], dir: "auto" });
      pre.textContent = a ? answerText(a.prediction) : "(not run on this instance)";
      card.appendChild(pre);
      if (a && index.main_metric) card.appendChild(el("div", { class: "small" }, index.main_metric + ": " + fmt(a.value)));
      var link = el("a", { href: "../runs/browse/" + index.run_ids[i] + ".html" }, "this run's instances");
      card.appendChild(link);
      grid.appendChild(card);
    });
    art.appendChild(grid);
    return art;
  }

  var token = 0;
  function render() {
    var mine = ++token;
    var positions = [];
    for (var i = 0; i < index.rows.length; i++) if (keep(index.rows[i])) positions.push(i);
    var start = state.page * PAGE_SIZE;
    if (start >= positions.length && state.page > 0) { state.page = 0; start = 0; }
    var page = positions.slice(start, start + PAGE_SIZE);
    var need = Array.from(new Set(page.map(function (p) { return index.rows[p][0]; })));
    status("Loading…");
    Promise.all(need.map(loadChunk)).then(function () {
      if (mine !== token) return;
      var list = document.getElementById("records");
      list.textContent = "";
      page.forEach(function (p) {
        var c = index.rows[p][0];
        list.appendChild(renderRecord(chunks[c].records[p - c * index.chunk_size]));
      });
      status(positions.length + " of " + index.count + " instances; showing " +
        (page.length ? (start + 1) + "–" + (start + page.length) : "none"));
      document.getElementById("next").disabled = start + PAGE_SIZE >= positions.length;
      document.getElementById("prev").disabled = state.page === 0;
    });
  }

  data.loadScript(base + "index.js");
})();
