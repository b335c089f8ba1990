// Per-instance browser: loads index.js, then chunk_NNNN.js files on demand through
// <script> elements (pages opened from file:// cannot fetch local files).
// Every piece of data is inserted with textContent: nothing from a model or a
// dataset is ever parsed as HTML.
(function () {
  "use strict";
  var PAGE_SIZE = 20;
  var root = document.getElementById("browser");
  if (!root) return;
  var base = root.getAttribute("data-base");
  var index = null;
  var chunks = {};
  var waiting = {};
  var state = { correct: "all", perturbation: "all", split: "all", query: "", page: 0, showWs: false };

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    if (attrs) for (var k in attrs) node.setAttribute(k, attrs[k]);
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function loadScript(src) {
    var s = document.createElement("script");
    s.src = src;
    s.onerror = function () { status("Could not load " + src); };
    document.body.appendChild(s);
  }

  window.HOLISTIC_INDEX = function (data) { index = data; setupFilters(); render(); };
  window.HOLISTIC_CHUNK = function (n, payload) {
    chunks[n] = payload;
    (waiting[n] || []).forEach(function (fn) { fn(payload); });
    delete waiting[n];
  };

  function loadChunk(n) {
    return new Promise(function (resolve) {
      if (chunks[n]) return resolve(chunks[n]);
      if (!waiting[n]) { waiting[n] = []; loadScript(base + "chunk_" + String(n).padStart(4, "0") + ".js"); }
      waiting[n].push(resolve);
    });
  }

  function status(text) { document.getElementById("browser-status").textContent = text; }

  function setupFilters() {
    var pert = document.getElementById("f-perturbation");
    index.perturbations.forEach(function (p) { pert.appendChild(el("option", { value: p }, p)); });
    var split = document.getElementById("f-split");
    index.splits.forEach(function (s) { split.appendChild(el("option", { value: s }, s)); });
    ["f-correct", "f-perturbation", "f-split"].forEach(function (id) {
      document.getElementById(id).addEventListener("change", function (e) {
        state[id.slice(2)] = e.target.value; state.page = 0; render();
      });
    });
    document.getElementById("f-search").addEventListener("submit", function (e) {
      e.preventDefault();
      state.query = document.getElementById("f-query").value.trim().toLowerCase();
      state.page = 0; render();
    });
    document.getElementById("f-ws").addEventListener("change", function (e) {
      state.showWs = e.target.checked; render();
    });
    document.getElementById("prev").addEventListener("click", function () {
      if (state.page > 0) { state.page -= 1; render(); }
    });
    document.getElementById("next").addEventListener("click", function () { state.page += 1; render(); });
  }

  function rowMatches(row) {
    if (state.correct === "correct" && row[1] !== 1) return false;
    if (state.correct === "wrong" && row[1] !== 0) return false;
    if (state.split !== "all" && index.splits[row[2]] !== state.split) return false;
    if (state.perturbation !== "all") {
      var bit = index.perturbations.indexOf(state.perturbation);
      if (!(row[3] & (1 << bit))) return false;
    }
    return true;
  }

  function fullPrompt(payload, req) {
    return (req.prefix ? payload.prefixes[req.prefix] : "") + req.prompt;
  }

  function recordText(payload, rec) {
    var parts = [rec.id];
    rec.variants.forEach(function (v) {
      parts.push(v.input);
      v.references.forEach(function (r) { parts.push(r.output); });
      v.trials.forEach(function (t) {
        t.requests.forEach(function (r) {
          parts.push(fullPrompt(payload, r));
          (r.completions || []).forEach(function (c) { parts.push(c); });
        });
      });
    });
    return parts.join("\n").toLowerCase();
  }

  var renderToken = 0;
  function render() {
    if (!index) return;
    var token = ++renderToken;
    var positions = [];
    for (var i = 0; i < index.rows.length; i++) if (rowMatches(index.rows[i])) positions.push(i);
    var list = document.getElementById("records");
    if (!state.query) {
      var start = state.page * PAGE_SIZE;
      if (start >= positions.length && state.page > 0) { state.page = 0; start = 0; }
      var page = positions.slice(start, start + PAGE_SIZE);
      var need = Array.from(new Set(page.map(function (p) { return index.rows[p][0]; })));
      status("Loading…");
      Promise.all(need.map(loadChunk)).then(function () {
        if (token !== renderToken) return;
        list.textContent = "";
        page.forEach(function (p) {
          var c = index.rows[p][0];
          list.appendChild(renderRecord(chunks[c], chunks[c].records[p - c * index.chunk_size]));
        });
        status(positions.length + " instances match; showing " + (page.length ? (start + 1) + "–" + (start + page.length) : "none") +
          " (page " + (state.page + 1) + " of " + Math.max(1, Math.ceil(positions.length / PAGE_SIZE)) + ")");
        document.getElementById("next").disabled = start + PAGE_SIZE >= positions.length;
        document.getElementById("prev").disabled = state.page === 0;
      });
      return;
    }
    // Search: scan chunks in order, loading each on demand, until this page is full.
    var wanted = (state.page + 1) * PAGE_SIZE + 1;
    var matches = [];
    var byChunk = {};
    positions.forEach(function (p) { var c = index.rows[p][0]; (byChunk[c] = byChunk[c] || []).push(p); });
    var chunkIds = Object.keys(byChunk).map(Number).sort(function (a, b) { return a - b; });
    var k = 0;
    function step() {
      if (token !== renderToken) return;
      if (k >= chunkIds.length || matches.length >= wanted) return done(k >= chunkIds.length);
      var c = chunkIds[k++];
      status("Searching… chunk " + k + " of " + chunkIds.length + ", " + matches.length + " found");
      loadChunk(c).then(function (payload) {
        byChunk[c].forEach(function (p) {
          var rec = payload.records[p - c * index.chunk_size];
          if (recordText(payload, rec).indexOf(state.query) >= 0) matches.push([payload, rec]);
        });
        setTimeout(step, 0);
      });
    }
    function done(complete) {
      list.textContent = "";
      var page = matches.slice(state.page * PAGE_SIZE, (state.page + 1) * PAGE_SIZE);
      page.forEach(function (m) { list.appendChild(renderRecord(m[0], m[1])); });
      status((complete ? matches.length : "At least " + (matches.length)) + " instances contain “" + state.query + "”" +
        (page.length ? "; showing " + (state.page * PAGE_SIZE + 1) + "–" + (state.page * PAGE_SIZE + page.length) : ""));
      document.getElementById("next").disabled = matches.length <= (state.page + 1) * PAGE_SIZE;
      document.getElementById("prev").disabled = state.page === 0;
    }
    step();
  }

  function ws(text) {
    if (!state.showWs) return text;
    return text.replace(/ /g, "·").replace(/\t/g, "→\t").replace(/\n/g, "↵\n");
  }

  function pre(text, cls) {
    var p = el("pre", { class: cls || "text" });
    p.textContent = ws(text == null ? "" : String(text));
    return p;
  }

  function fmt(v) { return v == null ? "–" : (typeof v === "number" ? v.toFixed(4) : String(v)); }

  function renderRecord(payload, rec) {
    var art = el("article", { class: "record", "data-id": rec.id });
    var head = el("h3", null, rec.id);
    var v0 = rec.variants[0];
    head.appendChild(el("span", { class: "tag" }, v0.split + (v0.sub_split ? " / " + v0.sub_split : "")));
    art.appendChild(head);
    var row = el("div", { class: "variants" });
    rec.variants.forEach(function (v) { row.appendChild(renderVariant(payload, v)); });
    art.appendChild(row);
    return art;
  }

  function renderVariant(payload, v) {
    var box = el("section", { class: "variant" });
    box.appendChild(el("h4", null, v.perturbation ? "Perturbed: " + v.perturbation : "Original"));
    box.appendChild(el("div", { class: "label" }, "Input"));
    box.appendChild(pre(v.input));
    if (v.references.length) {
      box.appendChild(el("div", { class: "label" }, "References"));
      var ol = el("ol", { class: "refs", type: "A" });
      v.references.forEach(function (r) {
        var li = el("li", { class: r.correct ? "correct" : "" });
        li.appendChild(el("span", { class: "mark", "aria-label": r.correct ? "correct" : "" }, r.correct ? "✓ " : ""));
        li.appendChild(el("span", null, r.output));
        ol.appendChild(li);
      });
      box.appendChild(ol);
    }
    if (v.metadata) {
      var md = el("details", { class: "metadata" });
      md.appendChild(el("summary", null, "Metadata (" + Object.keys(v.metadata).sort().join(", ") + ")"));
      md.appendChild(pre(JSON.stringify(v.metadata, null, 1)));
      box.appendChild(md);
    }
    v.trials.forEach(function (t) {
      var det = el("details", { class: "trial" });
      var metrics = Object.keys(t.metrics).sort().map(function (k) { return k + "=" + fmt(t.metrics[k]); }).join("  ");
      det.appendChild(el("summary", null, "Trial " + t.trial + (metrics ? " — " + metrics : "")));
      var choices = t.requests.filter(function (r) { return r.kind !== "generate" && r.reference_index != null; });
      t.requests.forEach(function (r, i) {
        if (i > 0 && r.kind !== "generate" && choices.length) return; // separate scoring: one prompt shown, choices in the table
        det.appendChild(el("div", { class: "label" }, "Prompt" + (r.prompt_truncated ? " (truncated to fit)" : "") +
          " — " + (r.num_train_instances || 0) + " in-context examples" + (r.train_ids && r.train_ids.length ? ": " + r.train_ids.join(", ") : "")));
        if (r.messages) {
          r.messages.forEach(function (m) { det.appendChild(el("div", { class: "role" }, m.role)); det.appendChild(pre(m.content)); });
        } else {
          det.appendChild(pre(fullPrompt(payload, r), "prompt"));
        }
        if (r.kind === "generate") {
          (r.completions || []).forEach(function (c, j) {
            det.appendChild(el("div", { class: "label" }, "Completion" + (r.completions.length > 1 ? " " + (j + 1) : "") +
              (r.cached ? " (cached)" : "")));
            det.appendChild(pre(c, "completion"));
          });
          if (r.post_processed && r.post_processed.length) det.appendChild(el("div", { class: "small" }, "Parsed: " + r.post_processed.join(" | ")));
        } else if (!choices.length) {
          det.appendChild(el("div", { class: "small" }, "Scored continuation: " + JSON.stringify(r.continuation) + " logprob " + fmt(r.logprob)));
        }
        if (r.error) det.appendChild(el("div", { class: "error" }, "Error: " + r.error));
        if (r.parse_error) det.appendChild(el("div", { class: "error" }, "Parse error: " + r.parse_error));
      });
      if (choices.length) {
        var table = el("table", { class: "choices" });
        var hr = el("tr");
        ["Choice", "Role", "Continuation", "Log-probability"].forEach(function (h) { hr.appendChild(el("th", { scope: "col" }, h)); });
        var thead = el("thead"); thead.appendChild(hr); table.appendChild(thead);
        var tb = el("tbody");
        choices.forEach(function (r) {
          var tr = el("tr");
          [String.fromCharCode(65 + r.reference_index), r.role, r.continuation, fmt(r.logprob)].forEach(function (x) { tr.appendChild(el("td", null, x)); });
          tb.appendChild(tr);
        });
        table.appendChild(tb);
        det.appendChild(table);
      }
      box.appendChild(det);
    });
    return box;
  }

  loadScript(base + "index.js");
})();
