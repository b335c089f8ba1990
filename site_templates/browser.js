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
  var data = window.HOLISTIC_DATA.loader(base, "browser-status");
  var chunks = data.chunks, loadChunk = data.loadChunk, el = window.HOLISTIC_DATA.el;
  var state = { correct: "all", perturbation: "all", split: "all", query: "", page: 0, showWs: false };

  window.HOLISTIC_INDEX = function (payload) { index = payload; setupFilters(); render(); };
  window.HOLISTIC_CHUNK = data.deliver;

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

  // Text from a dataset or a model may be right to left (Arabic): each block takes its direction
  // from its first strong letter (dir="auto"; style.css lets each line do the same), so
  // punctuation lands where the writer put it and is never mirrored into the page's direction.
  function pre(text, cls) {
    var p = el("pre", { class: cls || "text", dir: "auto" });
    p.textContent = ws(text == null ? "" : String(text));
    return p;
  }

  function fmt(v) {
    if (v == null) return "–";
    if (typeof v !== "number") return String(v);
    if (Number.isInteger(v)) return String(v);
    return Math.abs(v) >= 1000 ? v.toFixed(0) : v.toPrecision(3);
  }

  // 1 correct, 0 wrong, -1 not scored: the main metric of one trial, >= 0.5 counts as correct.
  function verdict(trial) {
    var m = index.main_metric;
    if (!trial || !m || trial.metrics[m] == null) return -1;
    return trial.metrics[m] >= 0.5 ? 1 : 0;
  }
  // The instance's verdict, as the correctness filter sees it: the main metric averaged over trials.
  function verdictAll(v) {
    var m = index.main_metric;
    var vals = v.trials.map(function (t) { return m ? t.metrics[m] : null; }).filter(function (x) { return x != null; });
    if (!vals.length) return -1;
    return vals.reduce(function (a, b) { return a + b; }, 0) / vals.length >= 0.5 ? 1 : 0;
  }
  var VERDICT = { "1": ["correct", "✓ correct"], "0": ["wrong", "✗ wrong"], "-1": ["unknown", "? not scored"] };
  function badge(v) { return el("span", { class: "badge " + VERDICT[v][0] }, VERDICT[v][1]); }

  function renderRecord(payload, rec) {
    var v0 = rec.variants[0];
    var state0 = verdictAll(v0);
    var art = el("article", { class: "record " + VERDICT[state0][0], "data-id": rec.id });
    var head = el("h3", null, rec.id);
    head.appendChild(badge(state0));
    head.appendChild(el("span", { class: "tag" }, v0.split + (v0.sub_split ? " / " + v0.sub_split : "")));
    if (rec.variants.length > 1) head.appendChild(el("span", { class: "tag" }, (rec.variants.length - 1) + " perturbed variants"));
    art.appendChild(head);
    var row = el("div", { class: "variants" });
    rec.variants.forEach(function (v) { row.appendChild(renderVariant(payload, v)); });
    art.appendChild(row);
    return art;
  }

  function predictionText(pred) {
    if (!pred) return "(no answer recorded)";
    if (pred.error) return "(request failed)";
    var text = pred.text == null ? "" : String(pred.text);
    if (pred.parsed) text += "\n→ parsed: " + pred.parsed;
    if (pred.choice_text) text += "\n→ " + pred.choice_text;
    return text;
  }

  function renderAnswer(box, t) {
    var v = verdict(t);
    var grid = el("div", { class: "answer" });
    var left = el("div");
    left.appendChild(el("div", { class: "label" }, "Prediction"));
    left.appendChild(pre(predictionText(t && t.prediction), "completion " + VERDICT[v][0]));
    if (t && t.prediction && t.prediction.error) left.appendChild(el("div", { class: "error" }, "Error: " + t.prediction.error));
    var thinking = t ? t.requests.filter(function (r) { return r.reasoning != null; })[0] : null;
    if (thinking) {
      // the model's thoughts, folded under the answer (never scored: the answer alone is)
      var fold = el("details", { class: "reasoning" });
      fold.appendChild(el("summary", null, (thinking.reasoning_unfinished ? "Reasoning (unfinished: no answer)" : "Reasoning") +
        " — " + (thinking.reasoning_tokens || 0) + " tokens"));
      fold.appendChild(pre(thinking.reasoning, "reasoning"));
      left.appendChild(fold);
    }
    grid.appendChild(left);
    return grid;
  }

  function renderRefs(v) {
    var wrap = el("div");
    wrap.appendChild(el("div", { class: "label" }, "References"));
    if (!v.references.length) { wrap.appendChild(el("div", { class: "small" }, "none")); return wrap; }
    var ol = el("ol", { class: "refs", type: "A" });
    v.references.forEach(function (r) {
      var li = el("li", { class: r.correct ? "correct" : "" });
      li.appendChild(el("span", { class: "mark", "aria-label": r.correct ? "correct" : "" }, r.correct ? "✓ " : ""));
      li.appendChild(el("bdi", { class: "ref", dir: "auto" }, r.output));
      ol.appendChild(li);
    });
    wrap.appendChild(ol);
    return wrap;
  }

  function renderMetrics(t) {
    var m = index.main_metric;
    var frag = document.createDocumentFragment();
    var names = Object.keys(t.metrics).sort();
    if (m && t.metrics[m] != null) {
      var main = el("div", { class: "metric-main" });
      main.appendChild(el("span", null, m + ": "));
      main.appendChild(el("strong", null, fmt(t.metrics[m])));
      frag.appendChild(main);
    }
    var rest = names.filter(function (k) { return k !== m; });
    if (rest.length) {
      var det = el("details", { class: "metrics" });
      det.appendChild(el("summary", null, "Other metrics (" + rest.length + ")"));
      var table = el("table", { class: "metrics" });
      var tb = el("tbody");
      rest.forEach(function (k) {
        var tr = el("tr");
        tr.appendChild(el("th", { scope: "row" }, k));
        tr.appendChild(el("td", { class: "num" }, fmt(t.metrics[k])));
        tb.appendChild(tr);
      });
      table.appendChild(tb);
      det.appendChild(table);
      frag.appendChild(det);
    }
    return frag;
  }

  function renderPrompt(payload, t) {
    var det = el("details", { class: "trial" });
    var first = t.requests[0];
    var shots = first ? (first.num_train_instances || 0) : 0;
    det.appendChild(el("summary", null, "Prompt" + (t.requests.length > 1 ? "s and requests (" + t.requests.length + ")" : "") +
      " — " + shots + " in-context examples" + (first && first.prompt_truncated ? ", truncated to fit" : "")));
    var choices = t.requests.filter(function (r) { return r.kind !== "generate" && r.reference_index != null; });
    t.requests.forEach(function (r, i) {
      if (i > 0 && r.kind !== "generate" && choices.length) return; // separate scoring: one prompt shown, choices in the table
      if (r.train_ids && r.train_ids.length) det.appendChild(el("div", { class: "small" }, "Examples: " + r.train_ids.join(", ")));
      if (r.messages) {
        r.messages.forEach(function (m) { det.appendChild(el("div", { class: "role" }, m.role)); det.appendChild(pre(m.content)); });
      } else {
        det.appendChild(pre(fullPrompt(payload, r), "prompt"));
      }
      if (r.kind === "generate") {
        (r.completions || []).forEach(function (c, j) {
          det.appendChild(el("div", { class: "label" }, "Raw completion" + (r.completions.length > 1 ? " " + (j + 1) : "") +
            (r.cached ? " (cached)" : "")));
          det.appendChild(pre(c, "completion raw"));
        });
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
      var chosen = t.prediction ? t.prediction.choice : null;
      choices.forEach(function (r) {
        var tr = el("tr", r.reference_index === chosen && r.role === choices[0].role ? { class: "chosen" } : null);
        [String.fromCharCode(65 + r.reference_index), r.role, r.continuation, fmt(r.logprob)].forEach(function (x) { tr.appendChild(el("td", null, x)); });
        tb.appendChild(tr);
      });
      table.appendChild(tb);
      det.appendChild(table);
    }
    return det;
  }

  // Separate multiple choice: every choice's summed log-likelihood and its length-normalised
  // scores (as stored in the exact_match row's details), the pick under each normalisation,
  // the run's chosen answer (its headline normalisation) and the gold answers.
  var NORMS = [["none", "Log-likelihood (sum)", null], ["char", "per char", "choice_chars"],
    ["token", "per token", "choice_tokens"], ["byte", "per byte", "choice_bytes"]];
  function renderChoiceScores(v, t) {
    var d = t.details;
    var lps = d.choice_logprobs || [];
    var norms = d.calibrated ? [["none", "Calibrated score", null]] : NORMS;
    var picks = d.chosen_index || {};
    var headline = d.calibrated ? "none" : (index.normalization || "none");
    var chosen = picks[headline];
    var wrap = el("div", { class: "choice-scores" });
    wrap.appendChild(el("div", { class: "label" }, "Choice scores" + (d.calibrated ? " (log p(choice | prompt) − log p(choice | answer cue))" : "")));
    var table = el("table", { class: "choices scores" });
    var hr = el("tr");
    ["Choice", "Text"].concat(norms.map(function (n) { return n[1]; })).forEach(function (h) { hr.appendChild(el("th", { scope: "col" }, h)); });
    var thead = el("thead"); thead.appendChild(hr); table.appendChild(thead);
    var tb = el("tbody");
    lps.forEach(function (lp, i) {
      var ref = v.references[i] || { output: "", correct: false };
      var cls = [i === chosen ? "chosen" : "", ref.correct ? "gold" : ""].join(" ").trim();
      var tr = el("tr", cls ? { class: cls, "data-choice": String(i) } : { "data-choice": String(i) });
      var label = String.fromCharCode(65 + i) + (ref.correct ? " ✓ gold" : "") + (i === chosen ? " ◀ chosen" : "");
      tr.appendChild(el("th", { scope: "row" }, label));
      tr.appendChild(el("td", { class: "choice-text" }, ref.output));
      norms.forEach(function (n) {
        var len = n[2] ? (d[n[2]] || [])[i] : null;
        var score = n[2] ? lp / Math.max(len || 0, 1) : lp;
        var picked = picks[n[0]] === i;
        var td = el("td", { class: "num" + (picked ? " picked" : ""), "data-norm": n[0], title: n[2] ? "÷ " + len : "" },
          fmt(score) + (picked ? " ★" : ""));
        tr.appendChild(td);
      });
      tb.appendChild(tr);
    });
    table.appendChild(tb);
    wrap.appendChild(table);
    wrap.appendChild(el("div", { class: "small" }, "★ the pick under each normalisation; ◀ chosen: the run's headline (" +
      (headline === "none" ? "summed log-likelihood" : "per " + headline) + "); ✓ gold: a correct choice. " +
      "per char divides by the characters of the choice text (lm-evaluation-harness acc_norm), per token by its scored tokens (HELM), per byte by its UTF-8 bytes."));
    return wrap;
  }

  // Code scenarios: each completion as it ran in the sandbox (the details of the
  // code_eval_acc / test_avg row): the program, the outcome, the limit that stopped it.
  function renderCodeRuns(t) {
    var d = t.details;
    var wrap = el("div", { class: "code-runs" });
    wrap.appendChild(el("div", { class: "label" }, "Sandbox runs: " + d.c + " of " + d.n + " passed"));
    d.samples.forEach(function (s, i) {
      var det = el("details", { class: "code-run", "data-passed": s.passed ? "1" : "0" });
      var outcome = s.passed ? "passed" : "failed: " + s.reason;
      var summary = "Sample " + (i + 1) + " — " + outcome + (s.limit ? " [limit: " + s.limit + "]" : "") +
        " (" + fmt(s.wall_s) + " s)";
      if (s.tests && s.tests.length > 1) {
        summary += " tests " + s.tests.map(function (ok) { return ok ? "✓" : "✗"; }).join("");
      }
      det.appendChild(el("summary", null, summary));
      det.appendChild(el("div", { class: "label" }, "Code run"));
      det.appendChild(pre(s.code, "code"));
      if (s.stdout) { det.appendChild(el("div", { class: "label" }, "Standard output (end)")); det.appendChild(pre(s.stdout)); }
      if (s.stderr) { det.appendChild(el("div", { class: "label" }, "Standard error (end)")); det.appendChild(pre(s.stderr)); }
      wrap.appendChild(det);
    });
    return wrap;
  }

  function renderDetails(v, t) {
    if (!t.details) return null;
    if (t.details.choice_logprobs) return renderChoiceScores(v, t);
    if (t.details.samples) return renderCodeRuns(t);
    return null;
  }

  function renderVariant(payload, v) {
    var box = el("section", { class: "variant" });
    box.appendChild(el("h4", null, v.perturbation ? "Perturbed: " + v.perturbation : "Original"));
    box.appendChild(el("div", { class: "label" }, "Input"));
    box.appendChild(pre(v.input, "text input"));
    var t0 = v.trials[0];
    var answer = renderAnswer(box, t0);
    answer.appendChild(renderRefs(v));
    box.appendChild(answer);
    if (t0) {
      box.appendChild(renderMetrics(t0));
      var d0 = renderDetails(v, t0);
      if (d0) box.appendChild(d0);
      box.appendChild(renderPrompt(payload, t0));
    }
    if (v.trials.length > 1) {
      var more = el("details", { class: "trials" });
      more.appendChild(el("summary", null, "Other trials (" + (v.trials.length - 1) + ")"));
      v.trials.slice(1).forEach(function (t) {
        var sec = el("section", { class: "trial-more" });
        var h = el("h5", null, "Trial " + t.trial + " ");
        h.appendChild(badge(verdict(t)));
        sec.appendChild(h);
        sec.appendChild(renderAnswer(sec, t));
        sec.appendChild(renderMetrics(t));
        var dt = renderDetails(v, t);
        if (dt) sec.appendChild(dt);
        sec.appendChild(renderPrompt(payload, t));
        more.appendChild(sec);
      });
      box.appendChild(more);
    }
    if (v.metadata) {
      var md = el("details", { class: "metadata" });
      md.appendChild(el("summary", null, "Metadata (" + Object.keys(v.metadata).sort().join(", ") + ")"));
      var json = pre(JSON.stringify(v.metadata, null, 1), "json");
      json.setAttribute("dir", "ltr");
      md.appendChild(json);
      box.appendChild(md);
    }
    return box;
  }

  data.loadScript(base + "index.js");
})();
